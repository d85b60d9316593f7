/**
 * Real-parts fixtures for the server tests: a temporary folder with a migrated,
 * demo-seeded SQLite file, a real build of the demo content, the real server on
 * 127.0.0.1 port 0 (or the real `cdsnap serve` process), and HTTP clients that
 * can say what fetch cannot (raw paths, chunked bodies, HEAD on the wire).
 */
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile, readdir, readlink, lstat, mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { build } from "../../src/build.js";
import { seedDemo } from "../../src/db/demo-seed.js";
import { migrate } from "../../src/db/migrations.js";
import { openDatabase } from "../../src/db/open.js";
import { treeStoreOf } from "../../src/emit/tree-store.js";
import { runCli, spawnCli, withDb, type CliResult } from "../helpers/fixture.js";
import { startServer, type RunningServer, type ServeOptions } from "../../src/server/create-server.js";

export { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DEMO_CONTENT = path.join(REPO_ROOT, "content");
/** A fixed build instant, so the published set (D1) does not depend on the day the tests run. */
export const BUILD_NOW = new Date("2026-07-01T00:00:00Z");
export const JSON_TYPE = "application/json; charset=utf-8";

// ------------------------------------------------------------------- the site

export interface Site {
  dir: string;
  db: string;
  out: string;
  /** `.site.cdsnap` beside `out`: generations, pages files, manifest. */
  stateDir: string;
}

/** A temporary folder holding `db.sqlite` (migrated and seeded with the demo) and a built `site` (unless `built: false`). */
export async function makeSite(options: { built?: boolean } = {}): Promise<Site> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-server-"));
  const db = path.join(dir, "db.sqlite");
  const out = path.join(dir, "site");
  withDb(db, (handle) => {
    migrate(handle);
    seedDemo(handle, new Date("2026-01-01T00:00:00Z"));
  });
  if (options.built !== false) await buildSite({ db, out });
  return { dir, db, out, stateDir: treeStoreOf(out).stateDir };
}

export function buildSite(site: Pick<Site, "db" | "out">) {
  return build({ db: site.db, content: DEMO_CONTENT, out: site.out, now: BUILD_NOW });
}

export async function removeSite(site: Site | undefined): Promise<void> {
  if (site) await rm(site.dir, { recursive: true, force: true });
}

/** Runs `fn` on a read-write handle of the database (a connection of its own, like an admin tool). */
export { runCli, withDb, type CliResult };

// ----------------------------------------------------------------- the server

export interface Served extends Site {
  url: string;
  running: RunningServer;
  /** Every line the server logged, in order. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

/** Starts the real server on the site with a collecting logger. */
export async function serveSite(site: Site, options: Partial<ServeOptions> = {}): Promise<Served> {
  const logs: Record<string, unknown>[] = [];
  const running = await startServer({
    db: site.db,
    out: site.out,
    host: "127.0.0.1",
    port: 0,
    log: (line) => logs.push(line),
    ...options,
  });
  return { ...site, url: running.url, running, logs, close: () => running.close(1_000) };
}

/** makeSite + serveSite; `stop` closes the server and removes the folder. */
export async function startSite(options: Partial<ServeOptions> = {}): Promise<Served & { stop(): Promise<void> }> {
  const site = await makeSite();
  const served = await serveSite(site, options);
  return {
    ...served,
    async stop() {
      await served.close();
      await removeSite(site);
    },
  };
}

export const api = (orgId: string, rest: string) => `/api/organizations/${orgId}/${rest}`;

// ------------------------------------------------------------------- clients

export interface Call {
  key?: string;
  headers?: Record<string, string>;
  method?: string;
  body?: string | Uint8Array;
}

/** One request with global fetch. */
export function call(url: string, pathAndQuery: string, options: Call = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers["x-api-key"] = options.key;
  return fetch(url + pathAndQuery, { method: options.method ?? "GET", headers, body: options.body });
}

/** A JSON PATCH with the given key. */
export function patchJson(url: string, pathAndQuery: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  return call(url, pathAndQuery, {
    method: "PATCH",
    key,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface RawCall {
  method?: string;
  /** Sent verbatim as the request target: no normalisation of `..`, `%2e` or `\`. */
  path: string;
  headers?: Record<string, string | string[]>;
  /** Written in this order; without a content-length header the body goes chunked. */
  chunks?: (string | Buffer)[];
}

/** One request with node:http, for what fetch would rewrite or refuse. */
export function rawRequest(url: string, options: RawCall): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: hostname,
      port,
      method: options.method ?? "GET",
      path: options.path,
      headers: options.headers,
      agent: false,
    });
    req.on("response", (res) => {
      const parts: Buffer[] = [];
      res.on("data", (chunk: Buffer) => parts.push(chunk));
      res.on("end", () => {
        const body = Buffer.concat(parts);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString("utf8") });
      });
      res.on("error", reject);
    });
    // A server that answers before reading the whole body may reset the upload; the answer is what counts.
    req.on("error", (error) => reject(error));
    for (const chunk of options.chunks ?? []) req.write(chunk);
    req.end();
  });
}

/**
 * Sends `head` (a request without a body, `Connection: close`) on a bare socket and
 * returns every byte the server wrote: the way to see that HEAD carries no body.
 */
export function rawExchange(url: string, head: string): Promise<Buffer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const parts: Buffer[] = [];
    socket.on("data", (chunk) => parts.push(chunk));
    socket.on("end", () => resolve(Buffer.concat(parts)));
    socket.on("error", reject);
    socket.write(head);
  });
}

// ---------------------------------------------------------------- assertions

export interface ErrorBody {
  error: { code: string; message: string; details?: { path: string; message: string }[] };
}

/** Asserts a D6 error answer (status, JSON content type, body shape, code) and returns its body. */
export async function expectError(res: Response | RawResponse, status: number, code: string): Promise<ErrorBody> {
  const text = res instanceof Response ? await res.text() : res.text;
  const contentType = res instanceof Response ? res.headers.get("content-type") : res.headers["content-type"];
  expect({ status: res.status, text }).toMatchObject({ status });
  expect(contentType).toBe(JSON_TYPE);
  const body = JSON.parse(text) as ErrorBody;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  const members = Object.keys(body.error).sort();
  expect(members).toEqual(body.error.details ? ["code", "details", "message"] : ["code", "message"]);
  // D6: a stack trace or a server path never reaches a client.
  expect(text).not.toMatch(/\bat .+:\d+:\d+|\/tmp\/|\/work\/|node_modules/);
  return body;
}

/** The `path`s of a 422's details. */
export function detailPaths(body: ErrorBody): string[] {
  return (body.error.details ?? []).map((d) => d.path);
}

// --------------------------------------------------------- state snapshots

/** The rows the write proxy may touch, in a stable order, as text. */
export function dumpBusinessTables(dbFile: string): string {
  const db = openDatabase(dbFile, { readonly: true });
  try {
    const tables = {
      organizations: db.prepare("SELECT * FROM organizations ORDER BY id").all(),
      business_offers: db.prepare("SELECT * FROM business_offers ORDER BY org_id, position").all(),
      api_keys: db.prepare("SELECT * FROM api_keys ORDER BY id").all(),
      organization_secrets: db.prepare("SELECT * FROM organization_secrets ORDER BY org_id, name").all(),
    };
    return JSON.stringify(tables);
  } finally {
    db.close();
  }
}

/** The stored business attributes of one organization. */
export function storedBusiness(dbFile: string, orgId: string): {
  businessDescription: string;
  businessOffers: { name: string; description: string; link?: string }[];
} {
  const db = openDatabase(dbFile, { readonly: true });
  try {
    const row = db.prepare("SELECT business_description FROM organizations WHERE id = ?").get(orgId) as {
      business_description: string;
    };
    const offers = db
      .prepare("SELECT name, description, link FROM business_offers WHERE org_id = ? ORDER BY position")
      .all(orgId) as { name: string; description: string; link: string | null }[];
    return {
      businessDescription: row.business_description,
      businessOffers: offers.map(({ name, description, link }) =>
        link === null ? { name, description } : { name, description, link },
      ),
    };
  } finally {
    db.close();
  }
}

/**
 * Every entry cdsnap keeps for a site: the `--out` link's target and, for every
 * file under the state folder, its bytes' hash, inode and mtime. Equal
 * snapshots: nothing was rewritten, renamed, added or removed.
 */
export async function snapshotTree(site: Pick<Site, "out" | "stateDir">): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  map.set("<out>", await readlink(site.out));
  async function walk(dir: string, rel: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        await walk(full, name);
        continue;
      }
      const info = await lstat(full);
      const hash = createHash("sha256").update(await readFile(full)).digest("hex");
      map.set(name, `${hash} ino=${info.ino} mtime=${info.mtimeMs}`);
    }
  }
  await walk(site.stateDir, "");
  return map;
}

/** The bytes of the live organization file. */
export function organizationFile(site: Pick<Site, "out">, orgId: string): Promise<Buffer> {
  return readFile(path.join(site.out, "api", "organizations", orgId, "organization.json"));
}

export function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

// ----------------------------------------------------------------------- CLI

export interface CliServer {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal) when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `cdsnap serve --port 0` on a site (`env` adds `CDSNAP_*` variables) and waits for its "cdsnap serving URL" line. */
export async function startCliServer(site: Site, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<CliServer> {
  const args = ["serve", "--db", site.db, "--content", DEMO_CONTENT, "--out", site.out, "--port", "0", ...extra];
  const child = await spawnCli(args, { env });
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cdsnap serve printed no URL; stderr: ${err}`)), 15_000);
    const look = () => {
      const match = /^cdsnap serving (http:\/\/\S+)$/m.exec(out);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off("data", look);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", look);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`cdsnap serve exited with ${code} before listening; stderr: ${err}`));
    });
  });
  return { url, child, stdout: () => out, stderr: () => err, exited };
}

/** Stops a CLI server this test started (by its pid, SIGTERM) and waits for it. */
export async function stopCliServer(server: CliServer | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill("SIGTERM");
  await server.exited;
}

/** Polls `check` every 50 ms until it returns true or `ms` pass; returns the last result. */
export async function pollUntil(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
