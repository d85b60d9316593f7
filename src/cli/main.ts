#!/usr/bin/env node
/**
 * The `cdsnap` command. Thin on purpose: parse flags (each also from its
 * CDSNAP_* variable), call the library, print what a person can act on, exit
 * non-zero on failure. `--debug` adds the stack of an unexpected error.
 */
import { Command, CommanderError } from "commander";
import packageJson from "../../package.json" with { type: "json" };
import { AuditFailedError, CdsnapError, InvalidSourcesError, UsageError, formatProblems } from "../errors.js";
import { registerAudit } from "./audit-command.js";
import { registerBuild } from "./build-command.js";
import { styleFor } from "./progress.js";
import { registerCheck } from "./check-command.js";
import { registerDb } from "./db-command.js";
import { registerDemo } from "./demo-command.js";
import { registerDev } from "./dev-command.js";
import { registerKeys } from "./keys-command.js";
import { registerServe } from "./serve-command.js";

export const EXIT = { ok: 0, failed: 1, usage: 2, internal: 70 } as const;

function fail(error: unknown, debug: boolean): number {
  if (error instanceof InvalidSourcesError || error instanceof AuditFailedError) {
    process.stderr.write(`${formatProblems(error.problems)}\n\n${styleFor(process.stderr).bad(`build failed: ${error.message}`)}\n`);
    return EXIT.failed;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`cdsnap: ${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof CdsnapError) {
    process.stderr.write(`cdsnap: ${error.message}\n`);
    return EXIT.failed;
  }
  const e = error as NodeJS.ErrnoException;
  if (e?.code === "ENOSPC") {
    process.stderr.write(`cdsnap: the disk is full (${e.path ?? "output"}); nothing was published\n`);
    return EXIT.failed;
  }
  process.stderr.write(`cdsnap: unexpected error: ${e?.message ?? String(error)}\n`);
  if (debug) process.stderr.write(`${e?.stack ?? ""}\n`);
  else process.stderr.write("run again with --debug for the stack, and report it\n");
  return EXIT.internal;
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
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return fail(error, program.opts<{ debug?: boolean }>().debug ?? argv.includes("--debug"));
  }
}

process.exitCode = await main(process.argv);
