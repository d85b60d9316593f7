/**
 * Shared parts of the reliability suite: the SOAK scale, the figures each area
 * prints, canary secrets and the scans that look for them, a post generator,
 * tree hashes, and bounded CLI runs. Servers, sites and the CLI path come from
 * the server tests' fixture (test/server/helpers.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, realpath, writeFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import path from "node:path";
import { hashKey } from "../../src/db/keys.js";
import { DEMO_SECRET_VALUES } from "../../src/db/demo-seed.js";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY, REPO_ROOT, withDb } from "../server/helpers.js";

// ------------------------------------------------------------------ scale

/** `npm run soak` sets SOAK=1: every case count and duration grows by `factor`. */
export const SOAK = process.env.SOAK === "1";

export function scaled(n: number, factor = 10): number {
  return SOAK ? n * factor : n;
}

/** Test timeout for a case whose work grows with {@link scaled}. */
export function budget(ms: number, factor = 10): number {
  return SOAK ? ms * factor : ms;
}

/**
 * Prints one figures line. process.stdout.write, not console.log: vitest shows it
 * verbatim (no per-test banner), in CI logs too.
 */
export function printFigures(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** The seed of this run's random choices: print it, and replay a failure with RELIABILITY_SEED. */
export const SEED = Number(process.env.RELIABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** A small seeded generator (xorshift32), so a failing run can be repeated. */
export function seededRandom(seed = SEED): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

// --------------------------------------------------------------- canaries

/**
 * Canary secrets: one distinctive value per organization and secret name,
 * stored in organization_secrets beside the demo's own. None may ever appear
 * in a tree file, a response, a header or a log line.
 */
export function plantCanarySecrets(dbFile: string): string[] {
  const planted: string[] = [];
  withDb(dbFile, (db) => {
    const orgs = (db.prepare("SELECT id FROM organizations ORDER BY id").all() as { id: string }[]).map((r) => r.id);
    const insert = db.prepare("INSERT OR REPLACE INTO organization_secrets (org_id, name, value) VALUES (?, ?, ?)");
    for (const org of orgs) {
      for (const name of ["canary_api_secret", "canary_oauth_token", "canary_mail_password"]) {
        const value = `CANARY-${org}-${name}-${randomBytes(8).toString("hex")}`;
        insert.run(org, name, value);
        planted.push(value);
      }
    }
  });
  return planted;
}

/** Everything secret in a demo site: stored secrets (canaries and the demo's), raw keys and their hashes. */
export function secretsOf(canaries: readonly string[], extraKeys: readonly string[] = []): string[] {
  const keys = [DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY, ...extraKeys];
  const values = [...canaries, ...DEMO_SECRET_VALUES, ...keys, ...keys.map(hashKey)];
  // A value that went through JSON.stringify shows its quotes and backslashes escaped.
  return [...new Set(values.flatMap((v) => [v, JSON.stringify(v).slice(1, -1)]))];
}

/** Looks for secrets in everything a test saw; `found` names each hit and where. */
export class SecretScanner {
  readonly found: string[] = [];
  responses = 0;
  headers = 0;
  files = 0;
  logLines = 0;
  bytes = 0;

  readonly secrets: string[];

  constructor(secrets: readonly string[]) {
    this.secrets = [...secrets];
  }

  /** More values to look for (keys created during a test). */
  add(values: readonly string[]): void {
    for (const value of secretsOf([], values)) if (!this.secrets.includes(value)) this.secrets.push(value);
  }

  private look(text: string, where: string): void {
    this.bytes += text.length;
    for (const secret of this.secrets) if (text.includes(secret)) this.found.push(`${where}: ${secret.slice(0, 12)}…`);
  }

  response(status: number, headers: Record<string, unknown> | Headers, body: string, where: string): void {
    this.responses++;
    const pairs = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
    this.headers += pairs.length;
    this.look(pairs.map(([k, v]) => `${k}: ${String(v)}`).join("\n"), `${where} (${status}) headers`);
    this.look(body, `${where} (${status}) body`);
  }

  /** A raw answer read off the socket: its header block and body. */
  wire(answer: { status: number | null; text: string }, where: string): void {
    this.responses++;
    const end = answer.text.indexOf("\r\n\r\n");
    this.headers += Math.max(0, (end === -1 ? answer.text : answer.text.slice(0, end)).split("\r\n").length - 1);
    this.look(answer.text, `${where} (${answer.status})`);
  }

  logs(lines: readonly (string | Record<string, unknown>)[], where: string): void {
    for (const line of lines) {
      this.logLines++;
      this.look(typeof line === "string" ? line : JSON.stringify(line), where);
    }
  }

  text(text: string, where: string): void {
    this.look(text, where);
  }

  /** Every file under `dir` but the SQLite files, which hold the secrets by design. */
  async scanFiles(dir: string): Promise<void> {
    for (const file of await listAllFiles(dir)) {
      if (/\.sqlite(-wal|-shm|-journal)?$/.test(file)) continue;
      this.files++;
      this.look((await readFile(path.join(dir, file))).toString("latin1"), file);
    }
  }

  summary(): string {
    return (
      `${this.responses} responses (${this.headers} headers), ${this.files} files, ${this.logLines} log lines ` +
      `scanned for ${this.secrets.length} secret spellings, ${this.found.length} found`
    );
  }
}

// ------------------------------------------------------------------ trees

/** Every regular file under `root` (links not followed), sorted, `/`-separated. */
export async function listAllFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, prefix: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path.join(dir, entry.name), rel);
      else if (entry.isFile()) out.push(rel);
    }
  }
  await walk(root, "");
  return out.sort();
}

/** The files of a published tree (`--out` is a link to a folder: resolve it once). */
export async function treeFiles(out: string): Promise<string[]> {
  return listAllFiles(`${out}/`);
}

/**
 * One hash over every relative path and its bytes, and the files that do not
 * parse as JSON. `--out` is resolved once, so a swap while hashing cannot mix
 * two generations. Synchronous reads: several times faster for thousands of small files.
 */
export async function hashTree(out: string): Promise<{ hash: string; files: number; unparsable: string[]; root: string }> {
  const root = await realpath(out);
  const hash = createHash("sha256");
  const unparsable: string[] = [];
  const files = await listAllFiles(root);
  for (const rel of files) {
    const bytes = readFileSync(path.join(root, rel));
    hash.update(`${rel}\0${bytes.length}\0`);
    hash.update(bytes);
    try {
      JSON.parse(bytes.toString("utf8"));
    } catch {
      unparsable.push(rel);
    }
  }
  return { hash: hash.digest("hex"), files: files.length, unparsable, root };
}

/**
 * Identity (inode, size, mtime) of every entry under `dir`: cheap proof that
 * nothing was written, renamed, added or removed. Synchronous on purpose: a few
 * hundred lstat calls take well under a millisecond this way.
 */
export function identities(dir: string): string {
  const parts: string[] = [];
  const walk = (d: string, prefix: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const full = path.join(d, entry.name);
      const info = lstatSync(full);
      parts.push(`${prefix}${entry.name} ${info.ino} ${info.size} ${info.mtimeMs}`);
      if (entry.isDirectory()) walk(full, `${prefix}${entry.name}/`);
    }
  };
  walk(dir, "");
  return parts.join("\n");
}

// ------------------------------------------------------------------ posts

const BODY = [
  "## Notes from the roastery",
  "",
  "We charged the drum at 200 °C and watched the **colour** turn from green to yellow [1].",
  "First crack came at nine minutes; we dropped the batch ninety seconds later.",
  "",
  "- Charge: 200 °C",
  "- First crack: 9:00",
  "",
].join("\n");

/**
 * Writes `count` valid published posts under `<content>/<orgId>/bulk/`. The
 * `variant` is part of every title, so two variants are two different trees.
 */
export async function writeBulkPosts(content: string, orgId: string, count: number, variant: string, category = "news"): Promise<void> {
  const dir = path.join(content, orgId, "bulk");
  await mkdir(dir, { recursive: true });
  const jobs: Promise<void>[] = [];
  for (let n = 0; n < count; n++) {
    const id = `bulk-${String(n).padStart(5, "0")}`;
    const text = [
      "---",
      `id: ${id}`,
      `title: "Bulk post ${n} (${variant})"`,
      `slug: ${id}`,
      "status: published",
      `publishedAt: 2024-01-${String((n % 28) + 1).padStart(2, "0")}`,
      "authorName: Ada Lovelace",
      `excerpt: "Bulk post ${n}, variant ${variant}."`,
      `category: ${category}`,
      "tags: [bulk]",
      "references:",
      `  - { source: Example Weekly, url: "https://example.com/r/${n}", asOf: "2024" }`,
      "---",
      BODY,
    ].join("\n");
    jobs.push(writeFile(path.join(dir, `${id}.md`), text));
    if (jobs.length >= 64) await Promise.all(jobs.splice(0));
  }
  await Promise.all(jobs);
}

// -------------------------------------------------------------------- CLI

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** True when the run outlived `timeoutMs` and was killed: a hang. */
  timedOut: boolean;
}

/** The bundled CLI (`npm test` writes it): these runs are killed on purpose, so they start it synchronously. */
const CLI = path.join(REPO_ROOT, "dist", "cli.js");

function cliEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("CDSNAP_")) delete env[name];
  return env;
}

/** `node dist/cli.js <args>`, killed (and reported as a hang) after `timeoutMs`; `child` to kill it sooner. */
export function startCli(args: readonly string[], timeoutMs = 60_000): { child: ChildProcess; done: Promise<Run> } {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run: npm run build:cli`);
  const started = Date.now();
  const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let timedOut = false;
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  const done = new Promise<Run>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, timedOut });
    });
  });
  return { child, done };
}

export function runCliBounded(args: readonly string[], timeoutMs = 60_000): Promise<Run> {
  return startCli(args, timeoutMs).done;
}

// ------------------------------------------------------------------- wire

export interface WireAnswer {
  /** Every byte the server sent, as latin1 text. */
  text: string;
  status: number | null;
  /** The body after the header block. */
  body: string;
  error?: string;
  ms: number;
}

/**
 * Writes `head` on a bare socket, then whatever `feed` writes, and collects the
 * answer until the server closes the connection (or `ms` pass).
 */
export function onTheWire(
  url: string,
  head: string | Buffer,
  feed: (socket: import("node:net").Socket, answered: () => boolean) => Promise<void> = async () => {},
  ms = 30_000,
): Promise<WireAnswer> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = "";
    let error: string | undefined;
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on("data", (chunk) => (text += chunk.toString("latin1")));
    socket.on("error", (e) => (error = (e as NodeJS.ErrnoException).code ?? e.message));
    socket.on("close", () => {
      clearTimeout(timer);
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const split = text.indexOf("\r\n\r\n");
      resolve({
        text,
        status: match ? Number(match[1]) : null,
        body: split === -1 ? "" : text.slice(split + 4),
        error,
        ms: Date.now() - started,
      });
    });
    socket.write(head);
    feed(socket, () => text !== "").catch(() => undefined);
  });
}

// ------------------------------------------------------------------ client

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  ms: number;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 256 });

/**
 * One request with node:http on a keep-alive agent (several times faster than
 * fetch on loopback, which matters at thousands of cases). The path is sent as
 * given; a body gets a Content-Length.
 */
export function httpCall(
  url: string,
  options: { method?: string; path: string; key?: string; headers?: Record<string, string>; body?: Buffer | string },
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers["x-api-key"] = options.key;
  if (body) headers["content-length"] = String(body.length);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method: options.method ?? "GET", path: options.path, headers, agent: keepAlive }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (chunk: Buffer) => parts.push(chunk));
      res.on("end", () => {
        const flat: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(", ") : v;
        resolve({ status: res.statusCode ?? 0, headers: flat, text: Buffer.concat(parts).toString("utf8"), ms: performance.now() - started });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}
