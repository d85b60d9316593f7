import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";
import { REPO_ROOT } from "../fixtures/repo.js";

describe("cdsnap --version", () => {
  it("prints the version of the package it came from, alone, with exit 0", async () => {
    const { version } = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const run = await runCli([flag]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(`${version}\n`);
    }
  });
});
