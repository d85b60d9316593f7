/**
 * The HTTP side: PATCH latency of the write proxy with 16 concurrent clients,
 * and GET throughput of `cdsnap serve` next to a node:http server answering the
 * same bytes from memory. The load generator (autocannon) runs in this process;
 * each server is a child whose stdout (the access log) goes to /dev/null, so
 * logging into a pipe does not slow it down.
 */
import autocannon, { type Request, type Result } from "autocannon";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { CLI, ROOT, makeTemp, progress, removeTemp, spawnNode } from "./measure.js";
import type { MemoryRoute } from "./memory-server.js";

export const CONNECTIONS = 16;

export interface ServeInput {
  db: string;
  content: string;
  out: string;
  orgId: string;
  readKey: string;
  writeKey: string;
  contentIds: readonly string[];
  seconds: number;
}

export interface Throughput {
  cdsnap: number;
  node: number;
}

export interface ServeResult {
  patch: { p50: number; p99: number; rps: number; failed: number };
  contents: Throughput;
  blocks: Throughput;
  /** Non-2xx answers or socket errors during the GET runs (should be 0). */
  getFailures: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Starts `cdsnap serve` on a port picked here, and waits until it answers. */
async function startCdsnap(input: ServeInput): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const args = [CLI, "serve", "--db", input.db, "--content", input.content, "--out", input.out];
  const child = spawnNode([...args, "--port", String(port), "--write-rate", "1000000"], ["ignore", "ignore", "pipe"]);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const base = `http://127.0.0.1:${port}`;
  const probe = `${base}/api/organizations/${input.orgId}/organization`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`cdsnap serve exited with ${child.exitCode}:\n${stderr.slice(-2000)}`);
    try {
      const res = await fetch(probe, { headers: { "x-api-key": input.readKey } });
      await res.arrayBuffer();
      if (res.ok) return { child, base };
      throw new Error(`cdsnap serve answered ${res.status} to ${probe}`);
    } catch (error) {
      if (!(error instanceof TypeError) || Date.now() > deadline) throw error; // TypeError: not listening yet
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function load(base: string, requests: Request[], seconds: number): Promise<Result> {
  // A short warm-up first, so the JIT and the file caches are the same for both servers.
  await autocannon({ url: base, connections: CONNECTIONS, duration: Math.min(2, seconds), requests });
  return autocannon({ url: base, connections: CONNECTIONS, duration: seconds, requests });
}

const SKIPPED_HEADERS = new Set(["date", "connection", "keep-alive", "transfer-encoding", "content-length"]);

/** The headers and bytes cdsnap serves for `apiPath`; the bytes must equal the tree file's. */
async function captureRoute(base: string, apiPath: string, input: ServeInput): Promise<MemoryRoute> {
  const res = await fetch(`${base}${apiPath}`, { headers: { "x-api-key": input.readKey } });
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`GET ${apiPath} answered ${res.status}`);
  const file = path.join(input.out, `${apiPath}.json`);
  if (!body.equals(readFileSync(file))) throw new Error(`GET ${apiPath} did not answer the bytes of ${file}`);
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!SKIPPED_HEADERS.has(name)) headers[name] = value;
  });
  return { path: apiPath, file, headers };
}

async function startMemoryServer(routesFile: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawnNode([path.join(ROOT, "dist", "bench", "memory-server.js"), routesFile], ["ignore", "pipe", "inherit"]);
  let buffered = "";
  child.stdout!.setEncoding("utf8");
  for await (const chunk of child.stdout!) {
    buffered += chunk as string;
    const match = /listening (\d+)/.exec(buffered);
    if (match) return { child, base: `http://127.0.0.1:${match[1]}` };
  }
  throw new Error("the memory server exited before listening");
}

const failures = (r: Result) => r.non2xx + r.errors + r.timeouts;

export async function benchServe(input: ServeInput): Promise<ServeResult> {
  const orgPath = `/api/organizations/${input.orgId}`;
  const read = { "x-api-key": input.readKey };
  const contentRequests: Request[] = input.contentIds.map((id) => ({ method: "GET", path: `${orgPath}/contents/${id}`, headers: read }));
  const blockRequests: Request[] = [{ method: "GET", path: `${orgPath}/blocks`, headers: read }];
  const write = { "x-api-key": input.writeKey, "content-type": "application/json" };
  const patchRequests: Request[] = ["Small-batch roasting on the waterfront.", "Static snapshots, served fast."].map((text) => ({
    method: "PATCH",
    path: `${orgPath}/business-description`,
    headers: write,
    body: JSON.stringify({ businessDescription: text }),
  }));

  progress("serve: starting cdsnap serve");
  const cdsnap = await startCdsnap(input);
  let routes: MemoryRoute[];
  let patch: Result;
  let contents: Result;
  let blocks: Result;
  try {
    progress(`serve: PATCH business-description, ${CONNECTIONS} clients, ${input.seconds} s`);
    patch = await load(cdsnap.base, patchRequests, input.seconds);
    routes = await Promise.all([...contentRequests, ...blockRequests].map((r) => captureRoute(cdsnap.base, r.path!, input)));
    progress(`serve: GET contents/{id} and blocks from cdsnap serve, ${input.seconds} s each`);
    contents = await load(cdsnap.base, contentRequests, input.seconds);
    blocks = await load(cdsnap.base, blockRequests, input.seconds);
  } finally {
    await stop(cdsnap.child);
  }

  const temp = makeTemp("cdsnap-bench-http-");
  const routesFile = path.join(temp, "routes.json");
  writeFileSync(routesFile, JSON.stringify(routes));
  progress("serve: the same GETs from the in-memory node:http server");
  const memory = await startMemoryServer(routesFile);
  let nodeContents: Result;
  let nodeBlocks: Result;
  try {
    nodeContents = await load(memory.base, contentRequests, input.seconds);
    nodeBlocks = await load(memory.base, blockRequests, input.seconds);
  } finally {
    await stop(memory.child);
    removeTemp(temp);
  }

  return {
    patch: { p50: patch.latency.p50, p99: patch.latency.p99, rps: patch.requests.average, failed: failures(patch) },
    contents: { cdsnap: contents.requests.average, node: nodeContents.requests.average },
    blocks: { cdsnap: blocks.requests.average, node: nodeBlocks.requests.average },
    getFailures: failures(contents) + failures(blocks) + failures(nodeContents) + failures(nodeBlocks),
  };
}
