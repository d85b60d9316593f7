/**
 * Parsing posts (YAML, validation, excerpts) is the build's largest CPU cost
 * before rendering; it can be split across worker threads. Off by default:
 * on the 2-core machines measured so far (npm run bench) a second thread did
 * not pay for its start-up and the copying of every record back; set
 * CDSNAP_PARSE_THREADS=N to use N threads. The worker is a separate bundle
 * (dist/parse-worker.js); where it does not exist (tests run the sources)
 * everything is parsed in this thread.
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Problem } from "../errors.js";
import type { PostRecord } from "../model/snapshot.js";
import { parseFiles, type BodyPolicy } from "./parse-files.js";

/** Below this many files a worker's start-up costs more than it saves. */
export const PARALLEL_THRESHOLD = 400;
const BATCH = 250;

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
  const threads = Math.min(availableParallelism(), Number(process.env.CDSNAP_PARSE_THREADS ?? 1) || 1);
  const workerFile = WORKER_URL.protocol === "file:" ? fileURLToPath(WORKER_URL) : "";
  if (rels.length < PARALLEL_THRESHOLD || threads < 2 || !workerFile.endsWith(".js") || !existsSync(workerFile)) {
    return { results: await parseFiles(contentDir, realRoot, rels, policy), threads: 1 };
  }
  const results = new Array<PostRecord | Problem[]>(rels.length);
  let next = 0;
  const run = async () => {
    const worker = new Worker(workerFile);
    try {
      while (next < rels.length) {
        const start = next;
        next = Math.min(rels.length, next + BATCH);
        const task: ParseTask = { contentDir, realRoot, rels: rels.slice(start, next) };
        const batch = await new Promise<(PostRecord | Problem[])[]>((resolve, reject) => {
          worker.once("message", resolve);
          worker.once("error", reject);
          worker.postMessage(task);
        });
        worker.removeAllListeners("error");
        batch.forEach((result, i) => {
          if (!Array.isArray(result)) policy(result);
          results[start + i] = result;
        });
      }
    } finally {
      await worker.terminate();
    }
  };
  await Promise.all(Array.from({ length: threads }, run));
  return { results, threads };
}
