import { Option } from "commander";
import path from "node:path";

/** The shared flags, each readable from its CDSNAP_* variable (data-contract.md). */
export const dbOption = () => new Option("--db <file>", "SQLite database file").env("CDSNAP_DB").makeOptionMandatory();
export const contentOption = () =>
  new Option("--content <dir>", "folder of markdown posts, one sub-folder per organization")
    .env("CDSNAP_CONTENT")
    .makeOptionMandatory();
export const outOption = () =>
  new Option("--out <dir>", "the published tree (a link cdsnap swaps atomically)").env("CDSNAP_OUT").makeOptionMandatory();

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(",").map((v) => v.trim()).filter(Boolean)];
}

export function absolute(file: string): string {
  return path.resolve(file);
}
