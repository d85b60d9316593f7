/**
 * Real-parts fixtures for the build tests: a temporary folder per test, a
 * migrated SQLite file, markdown posts on disk, the library `build()` and the
 * bundled `cdsnap` CLI, and helpers that read back the published tree.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, lstat, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { build, type BuildOptions } from "../../src/build.js";
import { seedDemo } from "../../src/db/demo-seed.js";
import { migrate } from "../../src/db/migrations.js";
import { openDatabase, type Db } from "../../src/db/open.js";
import { liveGeneration, pagesFileOf, treeStoreOf, type Generation } from "../../src/emit/tree-store.js";
import type { BuildReport } from "../../src/report.js";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DEMO_CONTENT = path.join(REPO_ROOT, "content");

/**
 * The build instant the demo tests use: after post-0010 (2026-05-31T23:30Z) and
 * before post-0014 (2026-09-18), so the demo has three scheduled posts.
 */
export const DEMO_NOW = new Date("2026-07-01T00:00:00Z");

// ---------------------------------------------------------------- temp folders

export interface Fixture {
  /** The temporary folder holding everything below. */
  dir: string;
  db: string;
  content: string;
  out: string;
}

/** A fresh temporary folder; remove it with {@link removeDir}. */
export async function makeTempDir(prefix = "cdsnap-build-"): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * A temporary folder with a migrated database (`db.sqlite`), an empty content
 * folder and the path of a not-yet-built `--out` (`site`).
 * With `demo`, the database is seeded and the demo posts are copied in.
 */
export async function makeFixture(options: { demo?: boolean } = {}): Promise<Fixture> {
  const dir = await makeTempDir();
  const fixture: Fixture = {
    dir,
    db: path.join(dir, "db.sqlite"),
    content: path.join(dir, "content"),
    out: path.join(dir, "site"),
  };
  await mkdir(fixture.content);
  createDatabase(fixture.db, { demo: options.demo });
  if (options.demo) await cp(DEMO_CONTENT, fixture.content, { recursive: true });
  return fixture;
}

/**
 * Fixtures (and other folders) removed after each test of the calling file;
 * call once at the top of a test file.
 */
export function fixturesRemovedAfterEach() {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map(removeDir));
  });
  const fixture = async (options: { demo?: boolean } = {}): Promise<Fixture> => {
    const fx = await makeFixture(options);
    made.push(fx.dir);
    return fx;
  };
  return {
    fixture,
    /** A fixture whose database holds one organization (slug = id) and nothing else. */
    async orgFixture(orgId = "acme"): Promise<Fixture> {
      const fx = await fixture();
      withDb(fx.db, (db) => insertOrg(db, { id: orgId, slug: orgId }));
      return fx;
    },
    removeAfterEach: (dir: string) => void made.push(dir),
  };
}

// ------------------------------------------------------------------- database

/** Creates (or opens) `file`, applies the migrations, and optionally seeds the demo. */
export function createDatabase(file: string, options: { demo?: boolean } = {}): void {
  withDb(file, (db) => {
    migrate(db);
    if (options.demo) seedDemo(db, new Date("2026-01-01T00:00:00Z"));
  });
}

/** Runs `fn` with a read-write handle on the database, closing it afterwards. */
export function withDb<T>(file: string, fn: (db: Db) => T): T {
  const db = openDatabase(file, { create: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export interface OrgInput {
  id: string;
  name?: string;
  slug?: string;
  googleAnalyticsId?: string | null;
  metaPixelId?: string | null;
  gtmContainerId?: string | null;
  businessDescription?: string;
}

export function insertOrg(db: Db, org: OrgInput): void {
  db.prepare(
    `INSERT INTO organizations (id, name, slug, google_analytics_id, meta_pixel_id, gtm_container_id, business_description)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    org.id,
    org.name ?? `Organization ${org.id}`,
    org.slug ?? org.id.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") + "-org",
    org.googleAnalyticsId ?? null,
    org.metaPixelId ?? null,
    org.gtmContainerId ?? null,
    org.businessDescription ?? "",
  );
}

export function insertCategory(
  db: Db,
  orgId: string,
  c: { id: string; slug: string; value: string; position?: number },
): void {
  db.prepare("INSERT INTO categories (org_id, id, slug, value, position) VALUES (?, ?, ?, ?, ?)").run(
    orgId,
    c.id,
    c.slug,
    c.value,
    c.position ?? 0,
  );
}

export interface FieldInput {
  key: string;
  type: string;
  /** Stored as JSON unless `raw` is set. */
  value: unknown;
  raw?: boolean;
  /** Defaults to the index in the list. */
  position?: number;
}

export interface BlockInput {
  id: string;
  slug: string;
  name?: string;
  status?: string;
  position?: number;
  fields?: FieldInput[];
  pages?: string[];
}

export function insertBlock(db: Db, orgId: string, b: BlockInput): void {
  db.prepare("INSERT INTO blocks (org_id, id, slug, name, status, position) VALUES (?, ?, ?, ?, ?, ?)").run(
    orgId,
    b.id,
    b.slug,
    b.name ?? `Block ${b.id}`,
    b.status ?? "published",
    b.position ?? 0,
  );
  (b.fields ?? []).forEach((f, i) => {
    db.prepare(
      "INSERT INTO block_fields (org_id, block_id, position, key, type, value) VALUES (?, ?, ?, ?, ?, ?)",
    ).run(orgId, b.id, f.position ?? i, f.key, f.type, f.raw ? String(f.value) : JSON.stringify(f.value));
  });
  for (const page of b.pages ?? []) {
    db.prepare("INSERT INTO block_pages (org_id, block_id, page) VALUES (?, ?, ?)").run(orgId, b.id, page);
  }
}

export function insertOffer(
  db: Db,
  orgId: string,
  o: { position: number; name: string; description: string; link?: string | null },
): void {
  db.prepare("INSERT INTO business_offers (org_id, position, name, description, link) VALUES (?, ?, ?, ?, ?)").run(
    orgId,
    o.position,
    o.name,
    o.description,
    o.link ?? null,
  );
}

export function insertSecret(db: Db, orgId: string, name: string, value: string): void {
  db.prepare("INSERT INTO organization_secrets (org_id, name, value) VALUES (?, ?, ?)").run(orgId, name, value);
}

// ---------------------------------------------------------------------- posts

/** Front matter of a valid published post; override or add members per test. */
export function postMeta(id: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    title: `Post ${id}`,
    slug: id.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, ""),
    status: "published",
    publishedAt: "2026-01-10",
    authorName: "Ada Lovelace",
    ...overrides,
  };
}

/** The text of a post file: YAML front matter between `---` lines, then the body. */
export function postText(meta: Record<string, unknown>, body = "A short body.\n"): string {
  return `---\n${stringifyYaml(meta)}---\n${body}`;
}

/** Writes a post (front matter object, or the whole file as a string) under `content/<rel>`. */
export async function writePost(
  contentDir: string,
  rel: string,
  meta: Record<string, unknown> | string | Buffer,
  body?: string,
): Promise<string> {
  const file = path.join(contentDir, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, typeof meta === "string" || Buffer.isBuffer(meta) ? meta : postText(meta, body));
  return file;
}

// ---------------------------------------------------------------------- build

/** Runs the library build on a fixture; `now` defaults to {@link DEMO_NOW}. */
export function buildFixture(fx: Fixture, options: Partial<BuildOptions> = {}): Promise<BuildReport> {
  return build({ db: fx.db, content: fx.content, out: fx.out, now: DEMO_NOW, ...options });
}

/** The problems of a failed build, or a thrown error when the build succeeded. */
export async function buildProblems(
  fx: Fixture,
  options: Partial<BuildOptions> = {},
): Promise<{ where: string; message: string }[]> {
  try {
    await buildFixture(fx, options);
  } catch (error) {
    const problems = (error as { problems?: { where: string; message: string }[] }).problems;
    if (problems) return problems;
    throw error;
  }
  throw new Error("expected the build to fail with source problems, but it succeeded");
}

// ----------------------------------------------------------------------- tree

/** Every regular file under `root` (symlinks to folders followed), as sorted `/`-separated relative paths. */
export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, prefix: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      const full = path.join(dir, entry.name);
      const info = await stat(full);
      if (info.isDirectory()) await walk(full, rel);
      else out.push(rel);
    }
  }
  await walk(root, "");
  return out.sort();
}

/** One hash over every relative path and its bytes: equal hashes, byte-identical trees. */
export async function hashTree(root: string): Promise<string> {
  const hash = createHash("sha256");
  for (const rel of await listFiles(root)) {
    const bytes = await readFile(path.join(root, rel));
    hash.update(`${rel}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return hash.digest("hex");
}

export interface FileIdentity {
  ino: number;
  mtimeMs: number;
  sha256: string;
}

/** Inode, mtime and content hash of every file of a tree: what "left exactly as it was" means. */
export async function identitiesOf(root: string): Promise<Map<string, FileIdentity>> {
  const map = new Map<string, FileIdentity>();
  for (const rel of await listFiles(root)) {
    const full = path.join(root, rel);
    const info = await stat(full);
    map.set(rel, {
      ino: info.ino,
      mtimeMs: info.mtimeMs,
      sha256: createHash("sha256").update(await readFile(full)).digest("hex"),
    });
  }
  return map;
}

/** Reads and parses one file of the published tree (relative to `--out`). */
export async function readTreeJson<T = unknown>(out: string, rel: string): Promise<T> {
  return JSON.parse(await readFile(path.join(out, rel), "utf8")) as T;
}

export function exists(file: string): boolean {
  return existsSync(file);
}

/** True when `file` exists at all, even as a dangling symlink. */
export async function pathExists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

/** The live generation of an `--out` (its pages and manifest live beside the tree). */
export async function liveGenerationOf(out: string): Promise<Generation> {
  const gen = await liveGeneration(treeStoreOf(out));
  if (!gen) throw new Error(`${out} has no live generation`);
  return gen;
}

/** Every byte cdsnap keeps for an `--out`: the tree and the state folder beside it. */
export function stateDirOf(out: string): string {
  return treeStoreOf(out).stateDir;
}

// ------------------------------------------------------------------------ CLI

let cliReady: Promise<string> | undefined;

async function sourceHash(): Promise<string> {
  const hash = createHash("sha256");
  for (const rel of await listFiles(path.join(REPO_ROOT, "src"))) {
    hash.update(rel);
    hash.update(await readFile(path.join(REPO_ROOT, "src", rel)));
  }
  return hash.digest("hex").slice(0, 16);
}

/**
 * The `cdsnap` CLI bundled from the current sources, exactly as
 * scripts/bundle.mjs bundles dist/cli.js, but into a private file keyed by the
 * sources' hash: tests never run a stale dist/, and never rewrite dist/cli.js
 * while another suite is executing it. Lives under node_modules/ so the
 * external dependencies resolve.
 */
export function cliPath(): Promise<string> {
  cliReady ??= (async () => {
    const dir = path.join(REPO_ROOT, "node_modules", ".cache", "cdsnap-build-tests");
    const target = path.join(dir, `cli-${await sourceHash()}.mjs`);
    if (existsSync(target)) return target;
    const { build: esbuild } = await import("esbuild");
    const result = await esbuild({
      entryPoints: [path.join(REPO_ROOT, "src/cli/main.ts")],
      bundle: true,
      platform: "node",
      target: "node20",
      format: "esm",
      packages: "external",
      write: false,
      logLevel: "warning",
      absWorkingDir: REPO_ROOT,
    });
    const code = result.outputFiles[0]?.contents;
    if (!code) throw new Error("esbuild produced no output for the CLI");
    await mkdir(dir, { recursive: true });
    const temp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temp, code);
    await rename(temp, target);
    // Bundles of older sources pile up as the sources change; drop those no run can still be using.
    for (const name of await readdir(dir)) {
      const file = path.join(dir, name);
      if (file === target || !/^cli-[0-9a-f]+\.mjs$/.test(name)) continue;
      const info = await stat(file).catch(() => null);
      if (info && Date.now() - info.mtimeMs > 30 * 60_000) await rm(file, { force: true });
    }
    return target;
  })();
  return cliReady;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `cdsnap <args>` to completion (no shell) and collects its output. */
export async function runCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  const child = await spawnCli(args, options);
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Starts `cdsnap <args>` and returns the child process (for the kill test). */
export async function spawnCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<ChildProcess> {
  const cli = await cliPath();
  const env = { ...process.env, ...options.env };
  // The CLI reads its flags (and CDSNAP_PARSE_THREADS) from CDSNAP_* too; a developer's shell must not leak in.
  for (const name of Object.keys(env)) if (name.startsWith("CDSNAP_") && !options.env?.[name]) delete env[name];
  return spawn(process.execPath, [cli, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
}

/** `build --db … --content … --out …` of a fixture, plus extra flags. */
export function buildArgs(fx: Fixture, ...extra: string[]): string[] {
  return ["build", "--db", fx.db, "--content", fx.content, "--out", fx.out, ...extra];
}

/** The D8 page membership a generation holds for an organization (what the server's ?pages= reads). */
export async function readPages(gen: Generation, orgId: string): Promise<Record<string, string[]> | null> {
  try {
    return JSON.parse(await readFile(pagesFileOf(gen, orgId), "utf8")) as Record<string, string[]>;
  } catch {
    return null;
  }
}
