/**
 * The edge handler under Node (`cdsnap edge serve`: serve's file cache, but
 * every answer made through the fetch API's Request and Response) next to
 * `cdsnap serve`, both child processes on the same built tree, GET
 * contents/{id} in turns. Plain answers on both sides: the load generator asks
 * for no encoding.
 */
import type { Request } from "autocannon";
import type { ChildProcess } from "node:child_process";
import { CLI, progress, spawnNode } from "./measure.js";
import { CONNECTIONS, compare, freePort, startCdsnap, stop, type ServeInput } from "./serve-bench.js";

export interface EdgeResult {
  /** Requests a second. */
  serve: number;
  edge: number;
  failed: number;
}

async function startEdge(input: ServeInput, origin: string): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawnNode([CLI, "edge", "serve", "--out", input.out, "--port", String(port), "--origin", origin], ["ignore", "pipe", "inherit"]);
  child.stdout!.setEncoding("utf8");
  let buffered = "";
  for await (const chunk of child.stdout!) {
    buffered += chunk as string;
    if (/^cdsnap edge serving /m.test(buffered)) {
      child.stdout!.resume();
      return { child, base: `http://127.0.0.1:${port}` };
    }
  }
  throw new Error(`cdsnap edge serve exited with ${child.exitCode} before listening`);
}

export async function benchEdge(input: ServeInput): Promise<EdgeResult> {
  const orgPath = `/api/organizations/${input.orgId}`;
  const requests: Request[] = input.contentIds.map((id) => ({ method: "GET", path: `${orgPath}/contents/${id}`, headers: { "x-api-key": input.readKey } }));
  progress("edge: starting cdsnap serve and cdsnap edge serve");
  const serve = await startCdsnap(input);
  let edge: { child: ChildProcess; base: string } | null = null;
  try {
    edge = await startEdge(input, serve.base);
    progress(`edge: GET contents/{id}, cdsnap serve and the edge handler under Node in turns, ${CONNECTIONS} clients, ${input.seconds} s each`);
    const { result, failed } = await compare(serve.base, edge.base, requests, input.seconds);
    return { serve: result.cdsnap, edge: result.node, failed };
  } finally {
    await stop(serve.child);
    if (edge) await stop(edge.child);
  }
}
