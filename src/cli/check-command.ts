import type { Command } from "commander";
import type { CheckResult } from "../check/check-sources.js";
import { plural } from "../report.js";
import { jsonProblem } from "./json-output.js";
import { absolute, collect, contentOption, dbOption } from "./options.js";

interface CheckFlags {
  db: string;
  content: string;
  org?: string[];
  postUrlPrefix?: string[];
  json?: boolean;
}

/** `blog` and `/blog` mean `/blog/`. */
function withSlashes(prefix: string): string {
  return `/${prefix.replace(/^\/+|\/+$/g, "")}/`.replace(/^\/\/$/, "/");
}

/**
 * What a build would do: fail on the errors it refuses (rule "build"), or
 * succeed and publish the lint errors as they are, visibly broken.
 */
function verdictOf(result: CheckResult): string {
  const refused = result.errors.filter((f) => f.rule === "build").length;
  const lint = result.errors.length - refused;
  const the = (n: number, what: string) => (n === 1 ? `the ${what}` : `the ${n} ${what}s`);
  if (refused > 0) {
    const fail = `a build would fail on ${the(refused, "error")} marked (build) and publish nothing`;
    if (lint === 0) return fail;
    return `${fail}; ${lint === 1 ? "the other is a lint error" : `the other ${lint} are lint errors`}, which a build would publish visibly broken`;
  }
  if (lint > 0) return `a build would succeed, but publish ${the(lint, "lint error")} visibly broken; fix ${lint === 1 ? "it" : "them"} first`;
  return "a build would accept these sources";
}

export function formatCheck(result: CheckResult): string {
  const lines = [
    ...result.errors.map((f) => `error   ${f.where}: ${f.message}  (${f.rule})`),
    ...result.warnings.map((f) => `warning ${f.where}: ${f.message}  (${f.rule})`),
  ];
  // Every post file looked at: one the build refuses is counted too, so the count matches the folder.
  const scope = `${plural(result.filesChecked, "post file")} in ${plural(result.orgsChecked, "organization")}`;
  if (lines.length > 0) lines.push("");
  lines.push(`check: ${plural(result.errors.length, "error")}, ${plural(result.warnings.length, "warning")} in ${scope}; ${verdictOf(result)}`);
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
    .option("--json", "print {ok, buildOk, errors, warnings} as one JSON object (for CI and editors)")
    .action(async (flags: CheckFlags) => {
      const { checkSources } = await import("../check/check-sources.js");
      const content = absolute(flags.content);
      const result = await checkSources(
        Object.freeze({ db: absolute(flags.db), content, orgs: flags.org, postUrlPrefixes: flags.postUrlPrefix?.map(withSlashes) }),
      );
      process.exitCode = result.ok ? 0 : 1;
      if (flags.json) {
        const json = {
          ok: result.ok,
          buildOk: result.buildOk,
          errors: result.errors.map((f) => jsonProblem(f, content)),
          warnings: result.warnings.map((f) => jsonProblem(f, content)),
          orgsChecked: result.orgsChecked,
          filesChecked: result.filesChecked,
          postsChecked: result.postsChecked,
        };
        process.stdout.write(`${JSON.stringify(json)}\n`);
        return;
      }
      process.stdout.write(`${formatCheck(result)}\n`);
    });
}
