/**
 * An install whose better-sqlite3 has no native binding (npm 11 not allowed its
 * install script, or --ignore-scripts): every command that opens a database
 * says how to fix the installation, with exit 2, not "unexpected error".
 */
import { spawnSync } from "node:child_process";
import { copyFile, cp, mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../fixtures/build-fixture.js";
import { cliPath } from "../fixtures/cli.js";
import { REPO_ROOT } from "../fixtures/repo.js";

let dir: string;

beforeAll(async () => {
  dir = await makeTempDir("cdsnap-no-binding-");
  const modules = path.join(dir, "node_modules");
  await mkdir(path.join(dir, "dist"), { recursive: true });
  await mkdir(modules);
  // Every dependency as installed, but better-sqlite3 as npm leaves it when its script never ran: no build/.
  for (const name of await readdir(path.join(REPO_ROOT, "node_modules"))) {
    if (name === "better-sqlite3" || name.startsWith(".")) continue;
    await symlink(path.join(REPO_ROOT, "node_modules", name), path.join(modules, name));
  }
  const sqlite = path.join(REPO_ROOT, "node_modules", "better-sqlite3");
  await cp(path.join(sqlite, "lib"), path.join(modules, "better-sqlite3", "lib"), { recursive: true });
  await copyFile(path.join(sqlite, "package.json"), path.join(modules, "better-sqlite3", "package.json"));
  await copyFile(await cliPath(), path.join(dir, "dist", "cli.js"));
  await writeFile(path.join(dir, "package.json"), '{ "type": "module" }\n');
});

afterAll(() => removeDir(dir));

describe("better-sqlite3 installed without its binding", () => {
  it("db migrate says to allow its script and rebuild, with exit 2", () => {
    const run = spawnSync(process.execPath, [path.join(dir, "dist", "cli.js"), "db", "migrate", "--db", path.join(dir, "x.db")], {
      cwd: dir,
      encoding: "utf8",
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("better-sqlite3, which cdsnap reads SQLite with, was installed without its native binding");
    expect(run.stderr).toContain('"allowScripts": { "better-sqlite3": true }');
    expect(run.stderr).toContain("npm rebuild better-sqlite3");
    expect(run.stderr).not.toMatch(/unexpected error|report it/);
  });
});
