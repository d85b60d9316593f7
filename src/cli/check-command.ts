import path from "node:path";
import type { Command } from "commander";
import { checkSources, type CheckResult } from "../check/check-sources.js";
import type { Finding } from "../check/lint-rules.js";
import { absolute, collect, contentOption, dbOption } from "./options.js";

interface CheckFlags {
  db: string;
  content: string;
  org?: string[];
  postUrlPrefix?: string[];
  json?: boolean;
}

/** `where` split into an absolute file and a line, for editors; database rows have neither. */
function located(f: Finding, content: string): Record<string, unknown> {
  const match = /^(.+\.md):(\d+)$/.exec(f.where) ?? /^(.+\.md)$/.exec(f.where);
  const base = { rule: f.rule, where: f.where, message: f.message };
  if (!match) return base;
  return { ...base, file: path.join(content, match[1]!), ...(match[2] ? { line: Number(match[2]) } : {}) };
}

/** `blog` and `/blog` mean `/blog/`. */
function withSlashes(prefix: string): string {
  return `/${prefix.replace(/^\/+|\/+$/g, "")}/`.replace(/^\/\/$/, "/");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function formatCheck(result: CheckResult): string {
  const lines = [
    ...result.errors.map((f) => `error   ${f.where}: ${f.message}  (${f.rule})`),
    ...result.warnings.map((f) => `warning ${f.where}: ${f.message}  (${f.rule})`),
  ];
  const scope = `${plural(result.postsChecked, "post")} in ${plural(result.orgsChecked, "organization")}`;
  const verdict = result.ok ? "a build would accept these sources" : "a build would refuse these sources";
  if (lines.length > 0) lines.push("");
  lines.push(`check: ${plural(result.errors.length, "error")}, ${plural(result.warnings.length, "warning")} in ${scope}; ${verdict}`);
  return lines.join("\n");
}

/**
 * `cdsnap check`: exit 0 when there is no error (warnings allowed), 1 when
 * there is one, 2 on a usage problem (main.ts). Writes nothing.
 */
export function registerCheck(program: Command): void {
  program
    .command("check")
    .description("validate the sources like a build would, plus content lint (citations, links, SEO lengths); writes nothing")
    .addOption(dbOption())
    .addOption(contentOption())
    .option("--org <id>", "check only this organization (repeatable)", collect)
    .option(
      "--post-url-prefix <path>",
      "site path under which the frontend serves posts by slug, e.g. /blog/ (repeatable): links to <path><slug> are checked",
      collect,
    )
    .option("--json", "print {ok, errors, warnings} as one JSON object (for CI and editors)")
    .action(async (flags: CheckFlags) => {
      const content = absolute(flags.content);
      const result = await checkSources(
        Object.freeze({ db: absolute(flags.db), content, orgs: flags.org, postUrlPrefixes: flags.postUrlPrefix?.map(withSlashes) }),
      );
      process.exitCode = result.ok ? 0 : 1;
      if (flags.json) {
        const json = {
          ok: result.ok,
          errors: result.errors.map((f) => located(f, content)),
          warnings: result.warnings.map((f) => located(f, content)),
          orgsChecked: result.orgsChecked,
          postsChecked: result.postsChecked,
        };
        process.stdout.write(`${JSON.stringify(json)}\n`);
        return;
      }
      process.stdout.write(`${formatCheck(result)}\n`);
    });
}
