#!/usr/bin/env node
/**
 * The `cdsnap` command. Thin on purpose: parse flags (each also from its
 * CDSNAP_* variable), call the library, print what a person can act on, exit
 * non-zero on failure. `--debug` adds the stack of an unexpected error.
 *
 * Each command registers its flags with light modules only and imports the
 * library its action uses (`await import()`) when the action runs: `cdsnap
 * --help` or a mistyped flag loads commander and little else, `cdsnap keys
 * list` SQLite but not zod, YAML, marked or the server. Keep the static
 * imports here and in the *-command.ts files to commander, node: modules and
 * modules that import nothing heavy (test/cli/lazy-load.test.ts holds them to it).
 */
import { Command, CommanderError } from "commander";
import path from "node:path";
import packageJson from "../../package.json" with { type: "json" };
import { AuditFailedError, CdsnapError, InvalidSourcesError, UsageError, formatProblems, systemRefusal } from "../errors.js";
import { registerAudit } from "./audit-command.js";
import { registerBuild } from "./build-command.js";
import { styleFor } from "./progress.js";
import { registerCheck } from "./check-command.js";
import { registerDb } from "./db-command.js";
import { registerDemo } from "./demo-command.js";
import { registerDev } from "./dev-command.js";
import { registerEdge } from "./edge-command.js";
import { failureJson } from "./json-output.js";
import { registerKeys } from "./keys-command.js";
import { registerServe } from "./serve-command.js";

export const EXIT = { ok: 0, failed: 1, usage: 2, internal: 70 } as const;

function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  if (error instanceof CdsnapError || systemRefusal(error)) return EXIT.failed;
  return EXIT.internal;
}

/** Prints what a person can act on (on stderr) and returns the exit code. */
/**
 * better-sqlite3 is a native addon: an install that skipped its script (npm 11's
 * allowScripts, --ignore-scripts) or a Node upgrade since leaves no loadable
 * binding. That is the installation's to fix (exit 2), not a bug to report.
 */
function sqliteBindingProblem(error: unknown): UsageError | undefined {
  const e = error as NodeJS.ErrnoException | undefined;
  const message = e?.message ?? "";
  const fix =
    'allow its install script ("allowScripts": { "better-sqlite3": true } in your package.json with npm 11), ' +
    "then run: npm rebuild better-sqlite3";
  if (message.startsWith("Could not locate the bindings file")) {
    return new UsageError(`better-sqlite3, which cdsnap reads SQLite with, was installed without its native binding; ${fix}`);
  }
  if (e?.code === "ERR_DLOPEN_FAILED" && /better[_-]sqlite3/.test(message)) {
    return new UsageError(`better-sqlite3's native binding does not load in Node.js ${process.version} (built for another version?); ${fix}`);
  }
  return undefined;
}

function fail(error: unknown, debug: boolean): number {
  const code = exitCodeOf(error);
  const refusal = systemRefusal(error);
  if (error instanceof InvalidSourcesError || error instanceof AuditFailedError) {
    process.stderr.write(`${formatProblems(error.problems)}\n\n${styleFor(process.stderr).bad(`build failed: ${error.message}`)}\n`);
  } else if (error instanceof CdsnapError) {
    process.stderr.write(`cdsnap: ${error.message}\n`);
  } else if (refusal) {
    process.stderr.write(`cdsnap: ${refusal.message}\n`);
  } else {
    process.stderr.write(`cdsnap: unexpected error: ${(error as Error)?.message ?? String(error)}\n`);
    printStackHint(error, debug);
  }
  return code;
}

function printStackHint(error: unknown, debug: boolean): void {
  if (debug) process.stderr.write(`${(error as Error)?.stack ?? ""}\n`);
  else process.stderr.write("run again with --debug for the stack, and report it\n");
}

/** Under --json the one JSON object on stdout is the whole answer; stderr has only a bug's stack hint. */
function failAsJson(error: unknown, content: string | undefined, debug: boolean): number {
  const code = exitCodeOf(error);
  process.stdout.write(`${JSON.stringify(failureJson(error, content))}\n`);
  if (code === EXIT.internal) printStackHint(error, debug);
  return code;
}

export function createProgram(): Command {
  const program = new Command("cdsnap")
    .description("Static snapshots of an organization's content API, and the origin that serves them")
    .version(packageJson.version, "-V, --version", "print the version of cdsnap")
    .option("--debug", "show the stack of unexpected errors")
    .showHelpAfterError()
    .exitOverride();
  registerBuild(program);
  registerCheck(program);
  registerDb(program);
  registerServe(program);
  registerKeys(program);
  registerDemo(program);
  registerDev(program);
  registerAudit(program);
  registerEdge(program);
  return program;
}

interface JsonFlags {
  json?: boolean;
  content?: string;
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram();
  let running: Command | undefined;
  program.hook("preAction", (_program, command) => {
    running = command;
  });
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (thrown) {
    const error = sqliteBindingProblem(thrown) ?? thrown;
    if (error instanceof CommanderError && error.exitCode === 0) return EXIT.ok;
    const debug = program.opts<{ debug?: boolean }>().debug ?? argv.includes("--debug");
    // The flags are parsed once an action runs; commander's own usage errors come before that (it printed them).
    const flags = running?.opts<JsonFlags>();
    if (flags?.json ?? argv.slice(2).includes("--json")) {
      const usage = error instanceof CommanderError ? new UsageError(error.message.replace(/^error: /, "")) : error;
      return failAsJson(usage, flags?.content === undefined ? undefined : path.resolve(flags.content), debug);
    }
    if (error instanceof CommanderError) return EXIT.usage;
    return fail(error, debug);
  }
}

process.exitCode = await main(process.argv);
