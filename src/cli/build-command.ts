import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { build } from "../build.js";
import { formatReport } from "../report.js";
import { absolute, collect, contentOption, dbOption, outOption } from "./options.js";

interface BuildFlags {
  db: string;
  content: string;
  out: string;
  org?: string[];
  json?: boolean;
  changedPaths?: string;
}

export function registerBuild(program: Command): void {
  program
    .command("build")
    .description("validate every source and write the static tree, one JSON file per API path")
    .addOption(dbOption())
    .addOption(contentOption())
    .addOption(outOption())
    .option("--org <id>", "rebuild only this organization (repeatable); the others keep their files", collect)
    .option("--json", "print the report as one JSON object (for CI)")
    .option("--changed-paths <file>", "write the API paths this build added, changed and removed (JSON), for CDN purges")
    .action(async (flags: BuildFlags) => {
      const report = await build(
        Object.freeze({ db: absolute(flags.db), content: absolute(flags.content), out: absolute(flags.out), orgs: flags.org }),
      );
      if (flags.changedPaths) await writeFile(absolute(flags.changedPaths), `${JSON.stringify(report.changedPaths, null, 2)}\n`);
      process.stdout.write(flags.json ? `${JSON.stringify(report)}\n` : `${formatReport(report)}\n`);
    });
}
