/**
 * A load generator on node:http for answers whose bodies are binary: autocannon
 * reads a compressed body several times slower than a JSON one of the same
 * length (52 against 210 answers a second for 1.37 MB from a bare node:http
 * server on this machine, where node:http's own client reads over 1,000), so
 * with it the coding rows would measure the load generator. `connections`
 * keep-alive connections each send their next request once the last answer's
 * body is read, for `seconds`.
 */
import { Agent, request } from "node:http";

export interface LoadInput {
  base: string;
  path: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  /** 200 answers. */
  answers: number;
  seconds: number;
  /** Body bytes read. */
  bytes: number;
  /** Answers other than 200, and failed requests. */
  failed: number;
}

export async function loadWithNodeHttp(input: LoadInput): Promise<LoadResult> {
  const { hostname, port } = new URL(input.base);
  const agent = new Agent({ keepAlive: true, maxSockets: input.connections });
  let answers = 0;
  let bytes = 0;
  let failed = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const req = request({ host: hostname, port, path: input.path, headers: input.headers, agent }, (res) => {
        res.on("data", (chunk: Buffer) => (bytes += chunk.length));
        res.on("end", () => {
          if (res.statusCode === 200) answers++;
          else failed++;
          resolve();
        });
        res.on("error", () => {
          failed++;
          resolve();
        });
      });
      req.on("error", () => {
        failed++;
        resolve();
      });
      req.end();
    });
  const started = process.hrtime.bigint();
  const until = started + BigInt(Math.round(input.seconds * 1e9));
  await Promise.all(
    Array.from({ length: input.connections }, async () => {
      while (process.hrtime.bigint() < until) await one();
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return { answers, seconds, bytes, failed };
}
