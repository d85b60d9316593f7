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
    .action(async (flags: BuildFlags) => {
      const report = await build(
        Object.freeze({ db: absolute(flags.db), content: absolute(flags.content), out: absolute(flags.out), orgs: flags.org }),
      );
      process.stdout.write(flags.json ? `${JSON.stringify(report)}\n` : `${formatReport(report)}\n`);
    });
}
