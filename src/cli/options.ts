import { InvalidArgumentError, Option, type Command } from "commander";
import path from "node:path";
import { UsageError } from "../errors.js";
import { createChangeHook, DEFAULT_HOOK_TIMEOUT_MS, type ChangeHook, type HookRun } from "../on-change/hook-runner.js";

/** The shared flags, each readable from its CDSNAP_* variable (data-contract.md). */
export const dbOption = () => new Option("--db <file>", "SQLite database file").env("CDSNAP_DB").makeOptionMandatory();
export const contentOption = () =>
  new Option("--content <dir>", "folder of markdown posts, one sub-folder per organization")
    .env("CDSNAP_CONTENT")
    .makeOptionMandatory();
export const outOption = () =>
  new Option("--out <dir>", "the published tree (a link cdsnap swaps atomically)").env("CDSNAP_OUT").makeOptionMandatory();
export const hostOption = () => new Option("--host <host>", "address to listen on").env("CDSNAP_HOST").default("127.0.0.1");
export const portOption = () =>
  new Option("--port <n>", "port to listen on (0 picks a free one)")
    .env("CDSNAP_PORT")
    .default(8787)
    .argParser(wholeNumber("--port", 0, 65535));

export const onChangeOption = () =>
  new Option(
    "--on-change <command>",
    "shell command to run after each change a CDN must purge, with the changed API paths and cache tags as JSON on its stdin (docs/cdn.md)",
  ).env("CDSNAP_ON_CHANGE");
export const onChangeTimeoutOption = () =>
  new Option("--on-change-timeout <seconds>", "kill an --on-change command still running after this long")
    .env("CDSNAP_ON_CHANGE_TIMEOUT")
    .default(DEFAULT_HOOK_TIMEOUT_MS / 1000)
    .argParser(wholeNumber("--on-change-timeout", 1, 3600));

export const scheduleOption = () =>
  new Option("--schedule", "build whenever a scheduled post falls due, so it is served on time without cron (docs/operating.md)").env("CDSNAP_SCHEDULE");

/**
 * Whether a switch (a flag without a value) is on. Commander turns one on
 * whenever its variable is set, whatever it holds: `CDSNAP_SCHEDULE=0` must
 * mean off. `1` or `true` is on; `0`, `false` or empty is off; anything else
 * is a usage error rather than a guess.
 */
export function switchOn(command: Command, name: string): boolean {
  const value = command.getOptionValue(name) === true;
  const variable = command.options.find((option) => option.attributeName() === name)?.envVar;
  if (command.getOptionValueSource(name) !== "env" || variable === undefined) return value;
  const text = (process.env[variable] ?? "").trim().toLowerCase();
  if (text === "1" || text === "true") return true;
  if (text === "0" || text === "false" || text === "") return false;
  throw new UsageError(`${variable} must be 1 or true to turn --${name} on, or 0, false or empty for off, not "${process.env[variable]}"`);
}

/** The --on-change hook the flags ask for, or null; `onRun` reports each run. */
export function hookOf(flags: { onChange?: string; onChangeTimeout: number }, onRun: (run: HookRun) => void): ChangeHook | null {
  if (!flags.onChange) return null;
  return createChangeHook({ command: flags.onChange, timeoutMs: flags.onChangeTimeout * 1000, onRun });
}

/** A commander parser for a whole number flag within [min, max]. */
export function wholeNumber(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(",").map((v) => v.trim()).filter(Boolean)];
}

export function absolute(file: string): string {
  return path.resolve(file);
}
