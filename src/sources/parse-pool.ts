/**
 * Reading posts can be shared between this thread and worker threads
 * (CDSNAP_PARSE_THREADS=N): parsing them (YAML, validation, excerpts), and
 * hashing the posts a fresh checkout gave new files. Everyone takes batches
 * from one queue, this thread included, so no core waits while another has work.
 * Hashing starts while the walk still runs: files join its queue folder by
 * folder (hashingQueue).
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
import { spoolFormOf, type PostRecord, type SpoolForm } from "../model/snapshot.js";
import { readIdentities, type Identity } from "./read-text.js";

/** Below this many files to parse a worker's start-up costs more than it saves. */
export const PARALLEL_THRESHOLD = 400;
/** A worker's batch. Parsing keeps two in flight, so that a worker never waits for this thread to hand it the next; hashing keeps HASH_AHEAD files' worth. */
const WORKER_BATCH = 200;
/** This thread's batch: small, so that between two of them the workers' answers are taken in promptly. */
const OWN_BATCH = 25;

const WORKER_URL = new URL("./parse-worker.js", import.meta.url);

/** What a worker is asked: to parse the files, or to hash them (unless this thread has claimed them back). */
export interface PoolTask {
  kind: "parse" | "hash";
  contentDir: string;
  realRoot: string;
  rels: string[];
  claim?: HashClaim;
  /** The form each parsed record is answered in. */
  form?: "record" | "spooled";
  /** False: the spooled form without the body. */
  bodies?: boolean;
}

/**
 * What is made of each record as it is parsed: taken whole, or in the form a
 * build's spool keeps; then `bodies` says, as each batch is sent to a worker,
 * whether bodies are still kept (the body budget): once they are not, a worker
 * sends none, where each would cross only to be let go.
 */
export type Taking<T> = { form: "record"; take: (record: PostRecord) => T } | { form: "spooled"; take: (parsed: SpoolForm) => T; bodies: () => boolean };

/** Each file parsed: what `taking` makes of it as it arrives (its body let go, its record spooled), or its problems. */
export async function parseInParallel<T>(
  contentDir: string,
  realRoot: string,
  rels: readonly string[],
  taking: Taking<T>,
): Promise<{ results: (T | Problem[])[]; threads: number }> {
  if (rels.length === 0) return { results: [], threads: 1 };
  // The YAML readers and the markdown lexer load only when a post is to be parsed: a build of unchanged posts never waits for them.
  const { parseFiles } = await import("./parse-files.js");
  const take = (parsed: PostRecord | SpoolForm) => (taking.form === "record" ? taking.take(parsed as PostRecord) : taking.take(parsed as SpoolForm));
  const here = taking.form === "record" ? taking.take : (record: PostRecord) => taking.take(spoolFormOf(record));
  const task = () => ({ kind: "parse" as const, contentDir, realRoot, form: taking.form, ...(taking.form === "spooled" && !taking.bodies() ? { bodies: false } : {}) });
  return shareOut<PostRecord | SpoolForm | Problem[], T | Problem[]>(
    task,
    rels,
    PARALLEL_THRESHOLD,
    (batch) => parseFiles(contentDir, realRoot, batch, here),
    (result) => (Array.isArray(result) ? result : take(result)),
  );
}

/**
 * A worker hashes beside this thread only for a walk of at least this many
 * posts (as the last build recorded them). Two threads do not hash faster on a
 * machine whose system calls do not scale across its cores: on this project's
 * (2 vCPUs, tmpfs), a fresh checkout of 10k posts took as long either way
 * (8 alternated pairs, 657 and 656 ms), and of 100k 6% less with a worker
 * (0.94, faster in 8 of 10 pairs), the walk and the hashing overlapping.
 */
export const HASH_WORKER_POSTS = 20_000;
/** Files waiting before the worker starts, once the walk is that large: about one folder's. */
const HASH_WORKER_AFTER = 300;
/**
 * Files a hashing worker is sent ahead: enough to keep it busy while this
 * thread reads a large folder's stored rows between two pauses of its walk.
 * What it has not started when the walk ends, this thread takes back.
 */
const HASH_AHEAD = 4_000;
/** Claim slots per worker: more than the batches it is ever sent ahead. */
const CLAIM_SLOTS = 64;

/**
 * A batch of files sent to a hashing worker, with its claim slot: the worker
 * hashes it only if it sets the slot from unclaimed to its own first; this
 * thread, done walking, takes back a batch by setting it to its own.
 */
export interface HashClaim {
  slots: Int32Array;
  slot: number;
}
export const UNCLAIMED = 0;
export const CLAIMED_BY_WORKER = 1;
const CLAIMED_HERE = 2;

/** Files to hash, handed over as a walk finds them; the identity of each once all are hashed. */
export interface HashingQueue {
  add: (rels: readonly string[]) => void;
  /**
   * Takes in the workers' answers and sends them more: awaited at each of the
   * walk's pauses. Undefined while no worker runs (nothing to wait for).
   */
  pause: () => Promise<void> | undefined;
  /** Each file's identity and SHA-256 in the order added, or null when it cannot be read (parsing then says why). This thread hashes beside the workers. */
  identities: () => Promise<(Identity | null)[]>;
  /** Stops the workers: the walk failed, and no identity will be asked for. */
  abandon: () => Promise<void>;
}

interface SentBatch {
  start: number;
  rels: string[];
  claim: HashClaim;
  /** The worker's identities, or null when this thread took the batch back. */
  answer: Promise<(Identity | null)[] | null>;
}

/** `posts`: how many posts the walk is expected to find (a worker pays only for a large one). */
export function hashingQueue(contentDir: string, realRoot: string, posts: number, workerAfter = HASH_WORKER_AFTER): HashingQueue {
  const threads = threadsWanted("CDSNAP_PARSE_THREADS");
  const workerFile = WORKER_URL.protocol === "file:" ? fileURLToPath(WORKER_URL) : "";
  const canShare = posts >= HASH_WORKER_POSTS && threads >= 2 && workerFile.endsWith(".js") && existsSync(workerFile);
  const queue: string[] = [];
  let next = 0;
  const found: (Identity | null)[] = [];
  const take = (size: number): { start: number; rels: string[] } | null => {
    if (next >= queue.length) return null;
    const start = next;
    next = Math.min(queue.length, next + size);
    return { start, rels: queue.slice(start, next) };
  };
  const store = (start: number, identities: (Identity | null)[]) => identities.forEach((identity, i) => (found[start + i] = identity));
  let closed = false;
  // Workers that found the queue empty, waiting for more or for its end.
  let idle: (() => void)[] = [];
  const wake = () => {
    const waiting = idle;
    idle = [];
    waiting.forEach((resume) => resume());
  };
  const running: Promise<void>[] = [];
  const workers: Worker[] = [];
  // Every worker's batches sent and not yet answered, oldest first.
  const sent: SentBatch[][] = [];

  const runWorker = async (inFlight: SentBatch[]) => {
    const worker = new Worker(workerFile);
    workers.push(worker);
    const slots = new Int32Array(new SharedArrayBuffer(CLAIM_SLOTS * Int32Array.BYTES_PER_ELEMENT));
    let batches = 0;
    const waiting: ((batch: (Identity | null)[] | null) => void)[] = [];
    let failed: ((error: unknown) => void) | null = null;
    worker.on("message", (batch: (Identity | null)[] | null) => waiting.shift()?.(batch));
    const crashed = new Promise<never>((_, reject) => (failed = reject));
    crashed.catch(() => undefined);
    worker.on("error", (error) => failed?.(error));
    let ahead = 0;
    try {
      for (;;) {
        for (let batch = ahead < HASH_AHEAD ? take(WORKER_BATCH) : null; batch; batch = ahead < HASH_AHEAD ? take(WORKER_BATCH) : null) {
          // The slot's last batch was answered: no more than CLAIM_SLOTS are ever in flight.
          const claim = { slots, slot: batches++ % CLAIM_SLOTS };
          Atomics.store(slots, claim.slot, UNCLAIMED);
          inFlight.push({ ...batch, claim, answer: new Promise((resolve) => waiting.push(resolve)) });
          ahead += batch.rels.length;
          worker.postMessage({ kind: "hash", contentDir, realRoot, rels: batch.rels, claim } satisfies PoolTask);
        }
        const first = inFlight[0];
        if (first === undefined) {
          if (closed) return;
          await new Promise<void>((resume) => idle.push(resume));
          continue;
        }
        const identities = await Promise.race([first.answer, crashed]);
        inFlight.shift();
        ahead -= first.rels.length;
        if (identities !== null) store(first.start, identities);
      }
    } finally {
      await worker.terminate();
    }
  };

  return {
    add(rels) {
      for (const rel of rels) queue.push(rel);
      if (canShare && running.length === 0 && queue.length - next >= workerAfter) {
        for (let n = 1; n < threads; n++) {
          const inFlight: SentBatch[] = [];
          sent.push(inFlight);
          const worker = runWorker(inFlight);
          // Seen when the identities are asked for: a crash before then fails the build there.
          worker.catch(() => undefined);
          running.push(worker);
        }
      }
      wake();
    },
    pause: () => (running.length === 0 ? undefined : new Promise<void>((resolve) => setImmediate(resolve))),
    async identities() {
      closed = true;
      wake();
      const breathe = () => (running.length > 0 ? new Promise((resolve) => setImmediate(resolve)) : undefined);
      for (let batch = take(OWN_BATCH); batch; batch = take(OWN_BATCH)) {
        store(batch.start, readIdentities(realRoot, contentDir, batch.rels));
        // Between two batches the workers' answers are taken in, and they are sent more.
        await breathe();
      }
      // What a worker was sent ahead and has not started, this thread hashes rather than wait: the newest first.
      for (const inFlight of sent) {
        for (const batch of [...inFlight].reverse()) {
          if (Atomics.compareExchange(batch.claim.slots, batch.claim.slot, UNCLAIMED, CLAIMED_HERE) !== UNCLAIMED) break;
          store(batch.start, readIdentities(realRoot, contentDir, batch.rels));
          await breathe();
        }
      }
      await Promise.all(running);
      return found;
    },
    async abandon() {
      closed = true;
      wake();
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}

/**
 * Runs `here` on batches of `rels` in this thread while workers run the same
 * task on other batches; `fromWorker` is called on each result a worker sends
 * back (what `here` does to its own as it makes them).
 */
async function shareOut<W, R>(
  task: () => Omit<PoolTask, "rels">,
  rels: readonly string[],
  threshold: number,
  here: (batch: string[]) => R[] | Promise<R[]>,
  fromWorker: (result: W) => R,
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
    const waiting: ((batch: W[]) => void)[] = [];
    let failed: ((error: unknown) => void) | null = null;
    worker.on("message", (batch: W[]) => waiting.shift()?.(batch));
    const crashed = new Promise<never>((_, reject) => (failed = reject));
    // Seen by the next race; a crash after the last batch was answered changes nothing.
    crashed.catch(() => undefined);
    worker.on("error", (error) => failed?.(error));
    const send = (range: [number, number]) => {
      const answer = new Promise<W[]>((resolve) => waiting.push(resolve));
      worker.postMessage({ ...task(), rels: rels.slice(range[0], range[1]) } satisfies PoolTask);
      return { start: range[0], answer };
    };
    try {
      const inFlight: { start: number; answer: Promise<W[]> }[] = [];
      for (let range = take(WORKER_BATCH); range; range = inFlight.length < 2 ? take(WORKER_BATCH) : null) {
        inFlight.push(send(range));
      }
      while (inFlight.length > 0) {
        const { start, answer } = inFlight.shift()!;
        const batch = await Promise.race([answer, crashed]);
        store(start, batch.map(fromWorker));
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
