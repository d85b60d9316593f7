/**
 * Compressed answers of `cdsnap serve`: GET throughput and the bytes of each
 * answer as the file itself, gzip and br, on the lists (and one post for
 * scale), loaded through node:http (http-load.ts says why not autocannon), and
 * how long the first request for a coding of the largest list waits while it
 * is compressed. Runs on a server no client has asked for a
 * coding of the contents list yet: the GET runs before it send no
 * Accept-Encoding.
 */
import { request } from "node:http";
import { loadWithNodeHttp } from "./http-load.js";

export const CODINGS = ["identity", "gzip", "br"] as const;
const ROUNDS = 2;
export type BenchCoding = (typeof CODINGS)[number];

export interface CodingRun {
  coding: BenchCoding;
  rps: number;
  /** The body of one answer in this coding. */
  bytes: number;
}

export interface CodingResult {
  /** Per path: its label and a run per coding, identity first. */
  paths: { label: string; runs: CodingRun[] }[];
  /** Wall time of single GETs of the contents list (ms): the first in each coding, then br again and identity. */
  first: { br: number; gzip: number; brCached: number; identity: number };
  /** Non-2xx answers or socket errors during the runs (should be 0). */
  failed: number;
}

interface Probe {
  ms: number;
  bytes: number;
  coding: string | undefined;
}

/** One GET on a connection of its own, timed from the request to the last byte of the body. */
function probe(base: string, path: string, key: string, coding: BenchCoding): Promise<Probe> {
  const { hostname, port } = new URL(base);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, agent: false, headers: { "x-api-key": key, "accept-encoding": coding } }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => (bytes += chunk.length));
      res.on("end", () => {
        if (res.statusCode !== 200) reject(new Error(`GET ${path} (${coding}) answered ${res.statusCode}`));
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        resolve({ ms, bytes, coding: res.headers["content-encoding"] });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

export interface CodingInput {
  base: string;
  key: string;
  /** Label and API path of each measured path; the first is the contents list. */
  paths: { label: string; path: string }[];
  seconds: number;
  connections: number;
}

export async function benchCodings(input: CodingInput): Promise<CodingResult> {
  const { base, key } = input;
  const contents = input.paths[0]!.path;
  // Order matters: br and gzip are each compressed by their first request.
  const first = {
    br: (await probe(base, contents, key, "br")).ms,
    gzip: (await probe(base, contents, key, "gzip")).ms,
    brCached: (await probe(base, contents, key, "br")).ms,
    identity: (await probe(base, contents, key, "identity")).ms,
  };
  let failed = 0;
  const paths: CodingResult["paths"] = [];
  for (const { label, path } of input.paths) {
    const loads = await Promise.all(
      CODINGS.map(async (coding) => {
        const answer = await probe(base, path, key, coding);
        if ((answer.coding ?? "identity") !== coding) throw new Error(`GET ${path} asked for ${coding} and answered ${answer.coding ?? "identity"}`);
        return { coding, bytes: answer.bytes, base, path, headers: { "x-api-key": key, "accept-encoding": coding }, connections: input.connections };
      }),
    );
    // A warm-up first, as in every GET run; then the codings in turns, so that other work on a shared machine hits each.
    for (const load of loads) await loadWithNodeHttp({ ...load, seconds: Math.min(2, input.seconds) });
    const totals = loads.map(() => ({ answers: 0, seconds: 0 }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, load] of loads.entries()) {
        const r = await loadWithNodeHttp({ ...load, seconds: input.seconds / ROUNDS });
        totals[i]!.answers += r.answers;
        totals[i]!.seconds += r.seconds;
        failed += r.failed;
      }
    }
    paths.push({ label, runs: loads.map((load, i) => ({ coding: load.coding, rps: totals[i]!.answers / totals[i]!.seconds, bytes: load.bytes })) });
  }
  return { paths, first, failed };
}
