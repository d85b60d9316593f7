/**
 * Rendering posts can be shared between this thread and worker threads
 * (`CDSNAP_RENDER_THREADS`, default: every core). A worker renders each post
 * it is sent, serializes and hashes its files, writes them into the next
 * generation itself and inspects their bytes for the audit, then hands back
 * only small facts (path, hash, identity, the audit's facts), never the bytes.
 * Everyone takes batches from one queue, this thread included.
 *
 * The worker is a separate bundle (dist/render-worker.js); where it does not
 * exist (tests run the sources) every post is rendered in this thread.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { threadsWanted } from "../threads-wanted.js";
import type { Inspected } from "../audit/audit-tree.js";
import type { SecretNeedle } from "../audit/scan-secrets.js";
import { UsageError } from "../errors.js";
import type { PreviewStatus } from "../model/api.js";
import type { Publication } from "../model/shapes.js";
import type { CategoryRecord, PostRecord } from "../model/snapshot.js";

/** Below this many posts to render, a worker's start-up costs more than it saves. */
export const PARALLEL_THRESHOLD = 400;
/** A worker's batch; two are in flight so that it never waits for this thread. */
const WORKER_BATCH = 64;
/** This thread's batch: small, so the workers' answers are taken in promptly. */
const OWN_BATCH = 8;

const WORKER_URL = new URL("./render-worker.js", import.meta.url);

/** What a worker renders a post from. */
export interface RenderJobInput {
  orgId: string;
  /** Its record as the build state stores it (recordJsonOf): one flat string crosses to a worker for a fraction of what an object's copy costs. */
  record: string;
  /** What the record's JSON leaves out: the file's identity, and its body while the build holds it. */
  beside: Pick<PostRecord, "fingerprint" | "sha256" | "body">;
  categories: [string, CategoryRecord][];
  /** The status its answers show: in the preview tree only. */
  status?: PreviewStatus;
  /** The live file's hash at each of the post's paths, when there is one. */
  live: [rel: string, sha256: string][];
}

export interface RenderSetup {
  tree: string;
  contentDir: string;
  /** The live tree, when its unchanged files must be linked into `tree` (a tree made from nothing). */
  linkFrom: string | null;
  /** The tree is a copy of the live one: a file written replaces the link there. */
  replace: boolean;
  orgIds: string[];
  needles: SecretNeedle[];
  publication: Publication;
}

/** One file of a rendered post: written (with the audit's inspection) or the live file kept. */
export type FileOutcome =
  | { rel: string; kept: true }
  | { rel: string; kept: false; sha256: string; ino: number; mtimeMs: number; size: number; bytes: number; inspected: Inspected };

export type RenderTask = { setup: RenderSetup } | { jobs: RenderJobInput[] };
export type RenderAnswer = { files: FileOutcome[][] } | { error: WorkerError };

/** The worker bundle, when this code runs bundled beside it and more than one thread is wanted. */
export function renderWorkers(jobs: number): { file: string; workers: number } | null {
  const threads = threadsWanted("CDSNAP_RENDER_THREADS");
  const file = WORKER_URL.protocol === "file:" ? fileURLToPath(WORKER_URL) : "";
  if (jobs < PARALLEL_THRESHOLD || threads < 2 || !file.endsWith(".js") || !existsSync(file)) return null;
  return { file, workers: threads - 1 };
}

/** An error a worker met, as it was there: a usage error stays one, a full disk says so (cli/main.ts). */
export interface WorkerError {
  message: string;
  code?: string;
  path?: string;
}

function rethrown(error: WorkerError): Error {
  if (error.code === "usage") return new UsageError(error.message);
  return Object.assign(new Error(error.message), { code: error.code, path: error.path });
}

/**
 * Renders every job, on `workers` worker threads and on this thread (`here`),
 * handing each worker-rendered post's outcome to `apply` as it comes.
 */
export async function renderInParallel<J>(
  jobs: readonly J[],
  pool: { file: string; workers: number },
  setup: RenderSetup,
  input: (job: J) => RenderJobInput,
  here: (job: J) => Promise<void>,
  apply: (job: J, files: FileOutcome[]) => void,
): Promise<void> {
  let next = 0;
  const take = (size: number): [number, number] | null => {
    if (next >= jobs.length) return null;
    const start = next;
    next = Math.min(jobs.length, next + size);
    return [start, next];
  };
  let failure: unknown = null;

  const runWorker = async () => {
    const worker = new Worker(pool.file);
    const waiting: ((answer: RenderAnswer) => void)[] = [];
    let crash: (error: unknown) => void = () => undefined;
    const crashed = new Promise<never>((_, reject) => (crash = reject));
    // Seen by the next race; a crash after the last batch was answered changes nothing.
    crashed.catch(() => undefined);
    worker.on("message", (answer: RenderAnswer) => waiting.shift()?.(answer));
    worker.on("error", (error) => crash(error));
    const send = (range: [number, number]) => {
      const answer = new Promise<RenderAnswer>((resolve) => waiting.push(resolve));
      worker.postMessage({ jobs: jobs.slice(range[0], range[1]).map(input) } satisfies RenderTask);
      return { start: range[0], answer };
    };
    try {
      worker.postMessage({ setup } satisfies RenderTask);
      const inFlight: { start: number; answer: Promise<RenderAnswer> }[] = [];
      for (let range = take(WORKER_BATCH); range && failure === null; range = inFlight.length < 2 ? take(WORKER_BATCH) : null) {
        inFlight.push(send(range));
      }
      while (inFlight.length > 0) {
        const { start, answer } = inFlight.shift()!;
        const got = await Promise.race([answer, crashed]);
        if ("error" in got) throw rethrown(got.error);
        got.files.forEach((files, i) => apply(jobs[start + i]!, files));
        const range = failure === null ? take(WORKER_BATCH) : null;
        if (range) inFlight.push(send(range));
      }
    } catch (error) {
      failure ??= error;
    } finally {
      await worker.terminate();
    }
  };

  const runHere = async () => {
    try {
      for (let range = take(OWN_BATCH); range && failure === null; range = take(OWN_BATCH)) {
        for (let i = range[0]; i < range[1]; i++) await here(jobs[i]!);
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      failure ??= error;
    }
  };

  await Promise.all([...Array.from({ length: pool.workers }, runWorker), runHere()]);
  if (failure !== null) throw failure;
}
