/**
 * What `--json` prints, for a result and for a failure alike: one JSON object
 * on stdout with `ok`, and every problem as `check --json` lists it, so a CI
 * script reads `.ok` and `.errors[]` the same way whatever the command.
 */
import path from "node:path";
import { AuditFailedError, errorSummary, InvalidSourcesError } from "../errors.js";

export interface JsonProblem {
  /** Which check found it: a lint rule, "build" for what the build refuses, "audit" for the audit of a new tree. */
  rule: string;
  where: string;
  message: string;
  /** The absolute file, for editors; database rows and folders have none. */
  file?: string;
  line?: number;
}

/** A problem as JSON: `where` split into an absolute file and a line when it names a post. */
export function jsonProblem(p: { rule: string; where: string; message: string }, content: string | undefined): JsonProblem {
  const base = { rule: p.rule, where: p.where, message: p.message };
  const match = /^(.+\.md)(?::(\d+))?$/.exec(p.where);
  if (!match || content === undefined) return base;
  return { ...base, file: path.join(content, match[1]!), ...(match[2] ? { line: Number(match[2]) } : {}) };
}

export interface JsonFailure {
  ok: false;
  /** The error's code: invalid_sources, audit_failed, usage, … ("internal" for a bug). */
  code: string;
  message: string;
  errors: JsonProblem[];
}

/**
 * The JSON of a command that failed; `content` (the content folder) makes the
 * posts' paths absolute.
 *
 * @example
 *   failureJson(new UsageError("--out /srv/site is a symbolic link cdsnap did not make"), undefined);
 *   // { ok: false, code: "usage", message: "--out /srv/site is …", errors: [] }
 */
export function failureJson(error: unknown, content: string | undefined): JsonFailure {
  if (error instanceof InvalidSourcesError || error instanceof AuditFailedError) {
    const rule = error instanceof InvalidSourcesError ? "build" : "audit";
    return {
      ok: false,
      code: error.code,
      message: error.message,
      errors: error.problems.map((p) => jsonProblem({ rule, ...p }, content)),
    };
  }
  return { ok: false, ...errorSummary(error), errors: [] };
}
