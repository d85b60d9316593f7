/**
 * Reading posts can be shared between this thread and worker threads
 * (CDSNAP_PARSE_THREADS=N): parsing them (YAML, validation, excerpts), and
 * hashing the posts a fresh checkout gave new files. Everyone takes batches
 * from one queue, this thread included, so no core waits while another has work.
 *
 * Every core by default, once there are enough files for a worker's start-up
 * to pay. With front matter read by js-yaml a second parsing thread saves
 * little, as copying each record back costs about what parsing it did: 10k
 * posts on tmpfs, hyperfine, 5.63 s ± 0.08 with two threads against 6.05 s
 * ± 0.16 with one (1.07x, on a machine with other work). Hashing sends back
 * only a fingerprint and a hash per file. The worker is a separate bundle
 * (dist/parse-worker.js); where it does not exist (tests run the sources)
 * everything is done in this thread.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { threadsWanted } from "../threads-wanted.js";
import type { Problem } from "../errors.js";
import type { PostRecord } from "../model/snapshot.js";
import type { BodyPolicy } from "./parse-files.js";
import { readIdentities, type Identity } from "./read-text.js";

/** Below this many files to parse a worker's start-up costs more than it saves. */
export const PARALLEL_THRESHOLD = 400;
/**
 * Hashing a file costs a fraction of parsing it: below this many, one thread
 * does it. A fresh checkout of 10k posts hashed no faster on two (hyperfine,
 * 1.04 ± 0.07 the other way); of 100k, 1.21 ± 0.06 faster (3.80 -> 3.14 s).
 */
export const HASH_PARALLEL_THRESHOLD = 20_000;
/** A worker's batch; two are in flight so that it never waits for this thread to hand it the next. */
const WORKER_BATCH = 200;
/** This thread's batch: small, so that between two of them the workers' answers are taken in promptly. */
const OWN_BATCH = 25;

const WORKER_URL = new URL("./parse-worker.js", import.meta.url);

/** What a worker is asked: to parse the files, or to hash them. */
export interface PoolTask {
  kind: "parse" | "hash";
  contentDir: string;
  realRoot: string;
  rels: string[];
}

/** Each file parsed: its record (with its body unless `policy` lets it go) or its problems. */
export async function parseInParallel(
  contentDir: string,
  realRoot: string,
  rels: readonly string[],
  policy: BodyPolicy,
): Promise<{ results: (PostRecord | Problem[])[]; threads: number }> {
  if (rels.length === 0) return { results: [], threads: 1 };
  // The YAML readers and the markdown lexer load only when a post is to be parsed: a build of unchanged posts never waits for them.
  const { parseFiles } = await import("./parse-files.js");
  return shareOut<PostRecord | Problem[]>(
    { kind: "parse", contentDir, realRoot },
    rels,
    PARALLEL_THRESHOLD,
    (batch) => parseFiles(contentDir, realRoot, batch, policy),
    (result) => {
      if (!Array.isArray(result)) policy(result);
    },
  );
}

/** Each file's identity and SHA-256 as it is now, or null when it cannot be read (parsing then says why). */
export async function hashInParallel(
  contentDir: string,
  realRoot: string,
  rels: readonly string[],
  threshold = HASH_PARALLEL_THRESHOLD,
): Promise<(Identity | null)[]> {
  const { results } = await shareOut<Identity | null>({ kind: "hash", contentDir, realRoot }, rels, threshold, (batch) =>
    readIdentities(realRoot, contentDir, batch),
  );
  return results;
}

/**
 * Runs `here` on batches of `rels` in this thread while workers run the same
 * task on other batches; `fromWorker` is called on each result a worker sends
 * back (what `here` does to its own as it makes them).
 */
async function shareOut<R>(
  task: Omit<PoolTask, "rels">,
  rels: readonly string[],
  threshold: number,
  here: (batch: string[]) => R[] | Promise<R[]>,
  fromWorker: (result: R) => void = () => undefined,
): Promise<{ results: R[]; threads: number }> {
  const threads = threadsWanted("CDSNAP_PARSE_THREADS");
  const workerFile = WORKER_URL.protocol === "file:" ? fileURLToPath(WORKER_URL) : "";
  if (rels.length < threshold || threads < 2 || !workerFile.endsWith(".js") || !existsSync(workerFile)) {
    return { results: await here([...rels]), threads: 1 };
  }
  const results = new Array<R>(rels.length);
  let next = 0;
  const take = (size: number): [number, number] | null => {
    if (next >= rels.length) return null;
    const start = next;
    next = Math.min(rels.length, next + size);
    return [start, next];
  };
  const store = (start: number, batch: R[]) => batch.forEach((result, i) => (results[start + i] = result));
  const runWorker = async () => {
    const worker = new Worker(workerFile);
    const waiting: ((batch: R[]) => void)[] = [];
    let failed: ((error: unknown) => void) | null = null;
    worker.on("message", (batch: R[]) => waiting.shift()?.(batch));
    const crashed = new Promise<never>((_, reject) => (failed = reject));
    // Seen by the next race; a crash after the last batch was answered changes nothing.
    crashed.catch(() => undefined);
    worker.on("error", (error) => failed?.(error));
    const send = (range: [number, number]) => {
      const answer = new Promise<R[]>((resolve) => waiting.push(resolve));
      worker.postMessage({ ...task, rels: rels.slice(range[0], range[1]) } satisfies PoolTask);
      return { start: range[0], answer };
    };
    try {
      const inFlight: { start: number; answer: Promise<R[]> }[] = [];
      for (let range = take(WORKER_BATCH); range; range = inFlight.length < 2 ? take(WORKER_BATCH) : null) {
        inFlight.push(send(range));
      }
      while (inFlight.length > 0) {
        const { start, answer } = inFlight.shift()!;
        const batch = await Promise.race([answer, crashed]);
        batch.forEach(fromWorker);
        store(start, batch);
        const range = take(WORKER_BATCH);
        if (range) inFlight.push(send(range));
      }
    } finally {
      await worker.terminate();
    }
  };

  const runHere = async () => {
    for (let range = take(OWN_BATCH); range; range = take(OWN_BATCH)) {
      store(range[0], await here(rels.slice(range[0], range[1])));
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  await Promise.all([...Array.from({ length: threads - 1 }, runWorker), runHere()]);
  return { results, threads };
}
