import { Option, type Command } from "commander";
import { formatProblems } from "../errors.js";
import { absolute, dbOption, outOption } from "./options.js";

interface AuditFlags {
  db: string;
  out: string;
  content?: string;
  json?: boolean;
  preview?: boolean;
}

/**
 * `cdsnap audit`: exit 0 when the tree is safe to publish, 1 with every problem
 * on stderr when it is not, 2 on a usage error (main.ts). `--json` prints the
 * whole result on stdout instead, with the same exit codes.
 */
export function registerAudit(program: Command): void {
  program
    .command("audit")
    .description("prove a published tree is safe: valid files only, no secret, nothing unpublished, every published item reachable")
    .addOption(dbOption())
    .addOption(outOption())
    .addOption(
      new Option("--content <dir>", "folder of markdown posts; without it posts are checked within the tree only").env(
        "CDSNAP_CONTENT",
      ),
    )
    .option("--json", "print the result as one JSON object (for CI)")
    .option("--preview", "audit the preview tree beside --out (<out>.preview, from build --preview) by its rules: no secret, no archived post")
    .action(async (flags: AuditFlags) => {
      const { auditOut } = await import("../audit/run-audit.js");
      const result = await auditOut(
        Object.freeze({
          db: absolute(flags.db),
          out: absolute(flags.out),
          content: flags.content === undefined ? undefined : absolute(flags.content),
          preview: flags.preview,
        }),
      );
      process.exitCode = result.ok ? 0 : 1;
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
        return;
      }
      if (result.warnings.length > 0) {
        process.stderr.write(`${result.warnings.map((w) => `warning: ${w.where}: ${w.message}`).join("\n")}\n`);
      }
      const files = `${result.filesChecked} file${result.filesChecked === 1 ? "" : "s"}`;
      if (result.ok) {
        const posts = result.postSourcesChecked ? "posts checked against their sources" : "post-source checks skipped";
        process.stdout.write(
          `audit passed: ${files} checked; every file valid, no secret found, nothing unpublished reachable, ` +
            `every published item reachable (${posts})\n`,
        );
        return;
      }
      const n = result.problems.length;
      process.stderr.write(
        `${formatProblems(result.problems)}\n\naudit failed: ${n} problem${n === 1 ? "" : "s"} in ${files} checked; ` +
          "do not publish this tree until they are fixed\n",
      );
    });
}
