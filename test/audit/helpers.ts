/**
 * Fixtures for the audit tests: a temporary folder with a migrated, demo-seeded
 * SQLite file, the demo posts of content/ copied beside it, a real build into
 * `site`, the real bundled `cdsnap` CLI, and ways to plant files into the live
 * tree without touching the generations that share its inodes.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "../../src/build.js";
import { seedDemo } from "../../src/db/demo-seed.js";
import { migrate } from "../../src/db/migrations.js";
import type { BuildReport } from "../../src/report.js";
import { cliPath, withDb } from "../helpers/fixture.js";

export { cliPath };

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const ORGS = "api/organizations";

export interface Site {
  dir: string;
  db: string;
  content: string;
  out: string;
}

/**
 * A temporary site with the demo database and posts, built once at the clock
 * (the CLI audit decides what is scheduled by the clock too).
 */
export async function makeSite(): Promise<Site> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-audit-"));
  const site: Site = { dir, db: path.join(dir, "db.sqlite"), content: path.join(dir, "content"), out: path.join(dir, "site") };
  await cp(path.join(REPO_ROOT, "content"), site.content, { recursive: true });
  withDb(site.db, (db) => {
    migrate(db);
    seedDemo(db, new Date("2026-01-01T00:00:00Z"));
  });
  await buildSite(site);
  return site;
}

export function buildSite(site: Site, options: Partial<BuildOptions> = {}): Promise<BuildReport> {
  return build({ db: site.db, content: site.content, out: site.out, ...options });
}

export async function removeSite(site: Site | undefined): Promise<void> {
  if (site) await rm(site.dir, { recursive: true, force: true });
}

/** Runs `fn` on a read-write handle of the database (a connection of its own, like an admin tool). */
export { withDb };

// ------------------------------------------------------------------ the tree

/**
 * Writes `rel` under the live tree as a new file renamed into place: tree files
 * are hard links shared with the previous generation, which must not change.
 */
export async function plant(out: string, rel: string, data: string | Buffer): Promise<void> {
  const target = path.join(out, rel);
  await mkdir(path.dirname(target), { recursive: true });
  const temp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(temp, data);
  await rename(temp, target);
}

export async function plantJson(out: string, rel: string, json: unknown): Promise<void> {
  await plant(out, rel, JSON.stringify(json));
}

export async function readJson<T = unknown>(out: string, rel: string): Promise<T> {
  return JSON.parse(await readFile(path.join(out, rel), "utf8")) as T;
}

/** Removes a file of the live tree (unlinking one name leaves other generations' links alone). */
export async function remove(out: string, rel: string): Promise<void> {
  await unlink(path.join(out, rel));
}

/** Every regular file under `root`, sorted, `/`-separated. */
export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, prefix: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if ((await stat(path.join(dir, entry.name))).isDirectory()) await walk(path.join(dir, entry.name), rel);
      else out.push(rel);
    }
  }
  await walk(root, "");
  return out.sort();
}

/** One hash over every path and byte of a tree. */
export async function hashTree(root: string): Promise<string> {
  const hash = createHash("sha256");
  for (const rel of await listFiles(root)) {
    const bytes = await readFile(path.join(root, rel));
    hash.update(`${rel}\0${bytes.length}\0`).update(bytes);
  }
  return hash.digest("hex");
}

// ------------------------------------------------------------------- the CLI



export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cdsnap <args>` to completion, with no CDSNAP_* variable from the developer's shell. */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const cli = await cliPath();
  const childEnv = { ...process.env };
  for (const name of Object.keys(childEnv)) if (name.startsWith("CDSNAP_")) delete childEnv[name];
  const child = spawn(process.execPath, [cli, ...args], { env: { ...childEnv, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** `audit --db … --out …` of a site (with `--content` unless `withContent` is false), plus extra flags. */
export function auditArgs(site: Site, options: { withContent?: boolean } = {}, ...extra: string[]): string[] {
  const content = options.withContent === false ? [] : ["--content", site.content];
  return ["audit", "--db", site.db, "--out", site.out, ...content, ...extra];
}
