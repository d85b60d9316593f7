/**
 * The HTTP side: PATCH latency of the write proxy with 16 concurrent clients,
 * GET throughput of `cdsnap serve` next to a node:http server answering the
 * same bytes from memory, and GET throughput and bytes per answer in each
 * content coding (coding-bench.ts). The load generator (autocannon) runs in this process;
 * each server is a child, cdsnap's stdout (the access log) going to /dev/null so
 * that logging into a pipe does not slow it down. The GET runs take turns
 * between the two servers, so that other work on a shared machine hits both.
 */
import autocannon, { type Request, type Result } from "autocannon";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { CLI, ROOT, makeTemp, progress, removeTemp, spawnNode } from "./measure.js";
import type { MemoryRoute } from "./memory-server.js";
import { benchCodings, type CodingResult } from "./coding-bench.js";

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
  /** GET contents/page/{n}, pages 1 to 10 in turn. */
  pages: Throughput;
  blocks: Throughput;
  codings: CodingResult;
  /** Non-2xx answers or socket errors during the GET runs (should be 0). */
  getFailures: number;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Starts `cdsnap serve` on a port picked here, and waits until it answers. */
export async function startCdsnap(input: ServeInput): Promise<{ child: ChildProcess; base: string }> {
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

async function warm(base: string, requests: Request[], seconds: number): Promise<void> {
  // JIT and file caches warm before anything counts.
  await autocannon({ url: base, connections: CONNECTIONS, duration: Math.min(2, seconds), requests });
}

async function load(base: string, requests: Request[], seconds: number): Promise<Result> {
  await warm(base, requests, seconds);
  return autocannon({ url: base, connections: CONNECTIONS, duration: seconds, requests });
}

const ROUNDS = 2;

/**
 * Both servers in turns (A B A B), half the time each turn, so that a burst of
 * other work on a shared machine lands on both rather than on one.
 */
export async function compare(cdsnap: string, node: string, requests: Request[], seconds: number): Promise<{ result: Throughput; failed: number }> {
  await warm(cdsnap, requests, seconds);
  await warm(node, requests, seconds);
  const totals = { cdsnap: { requests: 0, seconds: 0 }, node: { requests: 0, seconds: 0 } };
  let failed = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, base] of [["cdsnap", cdsnap], ["node", node]] as const) {
      const r = await autocannon({ url: base, connections: CONNECTIONS, duration: seconds / ROUNDS, requests });
      totals[name].requests += r.requests.total;
      totals[name].seconds += r.duration;
      failed += failures(r);
    }
  }
  return {
    result: { cdsnap: totals.cdsnap.requests / totals.cdsnap.seconds, node: totals.node.requests / totals.node.seconds },
    failed,
  };
}

const SKIPPED_HEADERS = new Set(["date", "connection", "keep-alive", "transfer-encoding", "content-length"]);

/** The headers and bytes cdsnap serves for `apiPath` uncompressed, as autocannon asks; the bytes must equal the tree file's. */
async function captureRoute(base: string, apiPath: string, input: ServeInput): Promise<MemoryRoute> {
  const res = await fetch(`${base}${apiPath}`, { headers: { "x-api-key": input.readKey, "accept-encoding": "identity" } });
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

export const failures = (r: Result) => r.non2xx + r.errors + r.timeouts;

export async function benchServe(input: ServeInput): Promise<ServeResult> {
  const orgPath = `/api/organizations/${input.orgId}`;
  const read = { "x-api-key": input.readKey };
  const contentRequests: Request[] = input.contentIds.map((id) => ({ method: "GET", path: `${orgPath}/contents/${id}`, headers: read }));
  const pageRequests: Request[] = Array.from({ length: 10 }, (_, i) => ({ method: "GET", path: `${orgPath}/contents/page/${i + 1}`, headers: read }));
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
  const temp = makeTemp("cdsnap-bench-http-");
  let memory: { child: ChildProcess; base: string } | null = null;
  try {
    progress(`serve: PATCH business-description, ${CONNECTIONS} clients, ${input.seconds} s`);
    const patch = await load(cdsnap.base, patchRequests, input.seconds);

    const routes = await Promise.all([...contentRequests, ...pageRequests, ...blockRequests].map((r) => captureRoute(cdsnap.base, r.path!, input)));
    const routesFile = path.join(temp, "routes.json");
    writeFileSync(routesFile, JSON.stringify(routes));
    memory = await startMemoryServer(routesFile);
    progress(`serve: GET contents/{id}, contents/page/{n}, then blocks: cdsnap serve and the in-memory node:http server in turns, ${input.seconds} s each`);
    const contents = await compare(cdsnap.base, memory.base, contentRequests, input.seconds);
    const pages = await compare(cdsnap.base, memory.base, pageRequests, input.seconds);
    const blocks = await compare(cdsnap.base, memory.base, blockRequests, input.seconds);
    progress(`serve: GET of the contents list, the blocks list and contents/{id} as identity, gzip and br, ${input.seconds} s each`);
    const codings = await benchCodings({
      base: cdsnap.base,
      key: input.readKey,
      paths: [
        { label: "contents list", path: `${orgPath}/contents` },
        { label: "blocks list", path: `${orgPath}/blocks` },
        { label: "contents/{id}", path: contentRequests[0]!.path! },
      ],
      seconds: input.seconds,
      connections: CONNECTIONS,
    });
    return {
      patch: { p50: patch.latency.p50, p99: patch.latency.p99, rps: patch.requests.average, failed: failures(patch) },
      contents: contents.result,
      pages: pages.result,
      blocks: blocks.result,
      codings,
      getFailures: contents.failed + pages.failed + blocks.failed + codings.failed,
    };
  } finally {
    await stop(cdsnap.child);
    if (memory) await stop(memory.child);
    removeTemp(temp);
  }
}
