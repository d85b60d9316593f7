import { InvalidArgumentError, Option } from "commander";
import path from "node:path";

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
