/**
 * Fixtures for the audit tests: a temporary folder with a migrated, demo-seeded
 * SQLite file, the demo posts of content/ copied beside it, a real build into
 * `site`, the real bundled `cdsnap` CLI, and ways to plant files into the live
 * tree without touching the generations that share its inodes.
 */
import { randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "../../src/build.js";
import { seedDemo } from "../../src/db/demo-seed.js";
import { migrate } from "../../src/db/migrations.js";
import type { BuildReport } from "../../src/report.js";
import { cliPath, hashTree, listFiles, runCli, withDb, type CliResult } from "../helpers/fixture.js";

export { cliPath, hashTree, listFiles, runCli, type CliResult };

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

// ------------------------------------------------------------------- the CLI



/** `audit --db … --out …` of a site (with `--content` unless `withContent` is false), plus extra flags. */
export function auditArgs(site: Site, options: { withContent?: boolean } = {}, ...extra: string[]): string[] {
  const content = options.withContent === false ? [] : ["--content", site.content];
  return ["audit", "--db", site.db, "--out", site.out, ...content, ...extra];
}
