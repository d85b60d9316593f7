import { writeFile } from "node:fs/promises";
import { Option, type Command } from "commander";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../render/pages.js";
import { formatReport } from "../report.js";
import { describeHookRun } from "../on-change/hook-runner.js";
import { absolute, collect, contentOption, dbOption, hookOf, onChangeOption, onChangeTimeoutOption, outOption, wholeNumber } from "./options.js";
import { createProgress, styleFor } from "./progress.js";

interface BuildFlags {
  db: string;
  content: string;
  out: string;
  org?: string[];
  json?: boolean;
  changedPaths?: string;
  quiet?: boolean;
  onChange?: string;
  onChangeTimeout: number;
  verify?: boolean;
  pageSize?: number;
  preview?: boolean;
}

const HEAP_GROWING_PERCENT = 25;

export function registerBuild(program: Command): void {
  program
    .command("build")
    .description("validate every source and write the static tree, one JSON file per API path")
    .addOption(dbOption())
    .addOption(contentOption())
    .addOption(outOption())
    .option("--org <id>", "rebuild only this organization (repeatable); the others keep their files", collect)
    .option("--json", "print the report, or every problem of a failed build, as one JSON object (for CI)")
    .option("--changed-paths <file>", "write the API paths this build added, changed and removed (JSON), for CDN purges")
    .option("--quiet", "print nothing but errors (and the --json report)")
    .option("--verify", "look at every file of the live tree instead of trusting the build state, and make the next tree from nothing (repairs a tree changed by hand)")
    .addOption(
      new Option(
        "--page-size <n>",
        `posts a page of a list holds (/contents/page/{n}); without it, the live tree's, ${DEFAULT_PAGE_SIZE} for a first build`,
      )
        .env("CDSNAP_PAGE_SIZE")
        .argParser(wholeNumber("--page-size", 1, MAX_PAGE_SIZE)),
    )
    .option("--preview", "also write the preview tree beside --out (<out>.preview): drafts and scheduled posts too, each with its status, for keys with the preview scope")
    .addOption(onChangeOption())
    .addOption(onChangeTimeoutOption())
    .action(async (flags: BuildFlags) => {
      const { build } = await import("../build.js");
      const { buildChange } = await import("../on-change/change-set.js");
      // A build is a batch job whose peak memory is what CI machines are sized
      // by: by default V8 lets the heap grow to about twice what is live between
      // full collections; 25% costs little more collection time (npm run bench).
      // node:v8 is imported here, not above: loading it adds 2 ms to every command's start.
      const { setFlagsFromString } = await import("node:v8");
      setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
      const progress = createProgress(process.stderr, flags.quiet === true || flags.json === true);
      const report = await build(
        Object.freeze({
          db: absolute(flags.db),
          content: absolute(flags.content),
          out: absolute(flags.out),
          orgs: flags.org,
          verify: flags.verify,
          pageSize: flags.pageSize,
          preview: flags.preview,
          onProgress: progress.update,
        }),
      ).finally(progress.finish);
      if (flags.changedPaths) await writeFile(absolute(flags.changedPaths), `${JSON.stringify(report.changedPaths, null, 2)}\n`);
      const quiet = flags.quiet === true || flags.json === true;
      // `ok` as in the JSON of a failed build (main.ts), so CI reads both the same way.
      if (flags.json) process.stdout.write(`${JSON.stringify({ ok: true, ...report })}\n`);
      else if (!flags.quiet) process.stdout.write(`${formatReport(report, styleFor(process.stdout))}\n`);
      if (!quiet) for (const warning of report.warnings) process.stderr.write(`warning: ${warning.where}: ${warning.message}\n`);
      // The tree is published whatever the hook does: its failure is reported, and the exit code stays the build's.
      const hook = hookOf(flags, (run) => {
        if (run.status !== "ok" || !quiet) process.stderr.write(`${describeHookRun(run)}\n`);
      });
      hook?.notify(buildChange(report.changedPaths, report.changedTags));
      await hook?.close();
    });
}
