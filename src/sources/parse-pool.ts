/**
 * Parsing posts (YAML, validation, excerpts) can be shared between this thread
 * and worker threads (CDSNAP_PARSE_THREADS=N). Everyone takes batches from one
 * queue, this thread included, so no core waits while another has work.
 *
 * Every core by default, once there are 400 posts or more to parse. With
 * front matter read by js-yaml a second thread saves little, as copying each
 * record back costs about what parsing it did: 10k posts on tmpfs, hyperfine,
 * 5.63 s ± 0.08 with two threads against 6.05 s ± 0.16 with one (1.07x, on a
 * machine with other work). The worker is a separate bundle
 * (dist/parse-worker.js); where it does not exist (tests run the sources)
 * everything is parsed in this thread.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { threadsWanted } from "../threads-wanted.js";
import type { Problem } from "../errors.js";
import type { PostRecord } from "../model/snapshot.js";
import type { BodyPolicy } from "./parse-files.js";

/** Below this many files a worker's start-up costs more than it saves. */
export const PARALLEL_THRESHOLD = 400;
/** A worker's batch; two are in flight so that it never waits for this thread to hand it the next. */
const WORKER_BATCH = 200;
/** This thread's batch: small, so that between two of them the workers' answers are taken in promptly. */
const OWN_BATCH = 25;

const WORKER_URL = new URL("./parse-worker.js", import.meta.url);

export interface ParseTask {
  contentDir: string;
  realRoot: string;
  rels: string[];
}

export async function parseInParallel(
  contentDir: string,
  realRoot: string,
  rels: readonly string[],
  policy: BodyPolicy,
): Promise<{ results: (PostRecord | Problem[])[]; threads: number }> {
  if (rels.length === 0) return { results: [], threads: 1 };
  // The YAML readers and the markdown lexer load only when a post is to be parsed: a build of unchanged posts never waits for them.
  const { parseFiles } = await import("./parse-files.js");
  const threads = threadsWanted("CDSNAP_PARSE_THREADS");
  const workerFile = WORKER_URL.protocol === "file:" ? fileURLToPath(WORKER_URL) : "";
  if (rels.length < PARALLEL_THRESHOLD || threads < 2 || !workerFile.endsWith(".js") || !existsSync(workerFile)) {
    return { results: parseFiles(contentDir, realRoot, rels, policy), threads: 1 };
  }
  const results = new Array<PostRecord | Problem[]>(rels.length);
  let next = 0;
  const take = (size: number): [number, number] | null => {
    if (next >= rels.length) return null;
    const start = next;
    next = Math.min(rels.length, next + size);
    return [start, next];
  };
  const store = (start: number, batch: (PostRecord | Problem[])[]) => {
    batch.forEach((result, i) => {
      if (!Array.isArray(result)) policy(result);
      results[start + i] = result;
    });
  };

  const runWorker = async () => {
    const worker = new Worker(workerFile);
    const waiting: ((batch: (PostRecord | Problem[])[]) => void)[] = [];
    let failed: ((error: unknown) => void) | null = null;
    worker.on("message", (batch: (PostRecord | Problem[])[]) => waiting.shift()?.(batch));
    const crashed = new Promise<never>((_, reject) => (failed = reject));
    // Seen by the next race; a crash after the last batch was answered changes nothing.
    crashed.catch(() => undefined);
    worker.on("error", (error) => failed?.(error));
    const send = (range: [number, number]) => {
      const answer = new Promise<(PostRecord | Problem[])[]>((resolve) => waiting.push(resolve));
      worker.postMessage({ contentDir, realRoot, rels: rels.slice(range[0], range[1]) } satisfies ParseTask);
      return { start: range[0], answer };
    };
    try {
      const inFlight: { start: number; answer: Promise<(PostRecord | Problem[])[]> }[] = [];
      for (let range = take(WORKER_BATCH); range; range = inFlight.length < 2 ? take(WORKER_BATCH) : null) {
        inFlight.push(send(range));
      }
      while (inFlight.length > 0) {
        const { start, answer } = inFlight.shift()!;
        store(start, await Promise.race([answer, crashed]));
        const range = take(WORKER_BATCH);
        if (range) inFlight.push(send(range));
      }
    } finally {
      await worker.terminate();
    }
  };

  const runHere = async () => {
    for (let range = take(OWN_BATCH); range; range = take(OWN_BATCH)) {
      store(range[0], parseFiles(contentDir, realRoot, rels.slice(range[0], range[1])));
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  await Promise.all([...Array.from({ length: threads - 1 }, runWorker), runHere()]);
  return { results, threads };
}
