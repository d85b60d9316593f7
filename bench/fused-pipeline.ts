/**
 * A measurement of a build laid out otherwise, not a build:
 *
 *   node dist/bench/fused-pipeline.js <content> <db> <tree> [threads]
 *
 * Each post of the `bench` organization is read, hashed, parsed and validated
 * as the build parses it (parse-files.ts), given its list item, rendered, serialized and hashed, written and
 * inspected as the audit inspects a written file, all in the thread that read
 * it, on `threads` threads (this one included, default 2). Only small facts
 * come back (the post's head, list item and record as JSON, each file's entry
 * and audit facts), and this thread streams them into a SQLite file beside
 * the tree (`<tree>.state.sqlite`) as they arrive, holding none of them. So it
 * shows what a build whose posts are never held by one thread would cost in
 * time and memory, next to `cdsnap build` on the same posts. Left out: the
 * lists and their pages, the organization's other files, the audit's
 * cross-file rules, the swap. docs/performance.md has what it measured.
 */
import Database from "better-sqlite3";
import { mkdirSync, realpathSync, rmSync } from "node:fs";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { fileOf } from "../src/api-paths.js";
import { createInspector } from "../src/audit/inspector.js";
import { serializedOnce } from "../src/emit/file-bytes.js";
import { createFile } from "../src/emit/tree-files.js";
import type { CategoryRecord, PostRecord } from "../src/model/snapshot.js";
import { stateOf } from "../src/render/contents.js";
import { renderPostFiles, summaryBytes } from "../src/render/render-org.js";
import { walkPosts } from "../src/sources/list-posts.js";
import { parseFiles } from "../src/sources/parse-files.js";

const ORG_ID = "bench";
/** A worker's batch; two are in flight so that it never waits for this thread. */
const WORKER_BATCH = 64;
/** This thread's batch: small, so the workers' answers are taken in promptly. */
const OWN_BATCH = 8;

interface Setup {
  content: string;
  realRoot: string;
  tree: string;
  categories: [string, CategoryRecord][];
  now: number;
}

interface PostFacts {
  rel: string;
  head: string;
  /** Of a published post: what the state keeps of it, and its files. */
  rows?: { record: string; summary: string; files: [rel: string, sha256: string, ino: number, mtimeMs: number, size: number, facts: string][] };
}

/** The whole of each post's work, for a batch of posts, in whichever thread runs it. */
function postPipeline(setup: Setup): (rels: readonly string[]) => Promise<PostFacts[]> {
  const categories = new Map(setup.categories);
  const inspect = createInspector(new Set([ORG_ID]), [], "public");
  const rendered = (record: PostRecord): PostFacts => {
    const state = stateOf(record, setup.now);
    const head = JSON.stringify({ id: record.meta.id, slug: record.meta.slug, state, instant: record.publish.instant, category: record.meta.category ?? null });
    if (state !== "published") return { rel: record.file, head };
    const { body, ...kept } = record;
    const serialized = serializedOnce();
    const files = renderPostFiles(ORG_ID, record, body!, categories).map((file): [string, string, number, number, number, string] => {
      const at = fileOf(file.route);
      const { bytes, sha256 } = serialized(file.json);
      return [at, sha256, ...createFile(setup.tree, at, bytes, false), JSON.stringify(inspect(at, bytes))];
    });
    return { rel: record.file, head, rows: { record: JSON.stringify(kept), summary: summaryBytes(record, categories, undefined).toString("utf8"), files } };
  };
  // Parsed as the build parses (parse-files.ts), every body kept: a batch is rendered once parsed, then let go.
  return async (rels) =>
    (await parseFiles(setup.content, setup.realRoot, rels)).map((parsed, n) => {
      if (Array.isArray(parsed)) throw new Error(`${rels[n]} does not parse: the bench's posts are valid`);
      return rendered(parsed);
    });
}

/** The posts as the build's walk finds them (its `stat` of each post included). */
function postFiles(content: string, realRoot: string): string[] {
  const walk = walkPosts(content, realRoot, [ORG_ID], () => undefined);
  let step = walk.next();
  while (!step.done) step = walk.next();
  return step.value.files.map((file) => file.rel);
}

/** The state's rows, written as each post's facts arrive, committed once at the end. */
function stateWriter(file: string) {
  rmSync(file, { force: true });
  const db = new Database(file);
  db.exec("CREATE TABLE posts (file TEXT PRIMARY KEY, head TEXT, record TEXT, summary TEXT) WITHOUT ROWID");
  db.exec("CREATE TABLE files (rel TEXT PRIMARY KEY, sha256 TEXT, ino INTEGER, mtime_ms REAL, size INTEGER, facts TEXT) WITHOUT ROWID");
  db.exec("BEGIN");
  const putPost = db.prepare("INSERT INTO posts VALUES (?, ?, ?, ?)");
  const putFile = db.prepare("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)");
  let posts = 0;
  let files = 0;
  return {
    put(facts: PostFacts) {
      posts++;
      putPost.run(facts.rel, facts.head, facts.rows?.record ?? null, facts.rows?.summary ?? null);
      for (const row of facts.rows?.files ?? []) {
        putFile.run(...row);
        files++;
      }
    },
    close() {
      db.exec("COMMIT");
      db.close();
      return { posts, files };
    },
  };
}

async function main(content: string, dbFile: string, tree: string, threads: number): Promise<void> {
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  // Timed from here: a tree left by an earlier run is not this run's work.
  const started = performance.now();
  const db = new Database(dbFile, { readonly: true });
  const categories = db.prepare("SELECT id, slug, value, position FROM categories WHERE org_id = ?").all(ORG_ID) as CategoryRecord[];
  db.close();
  const setup: Setup = { content, realRoot: realpathSync(content), tree, categories: categories.map((c) => [c.slug, c]), now: Date.now() };
  const rels = postFiles(content, setup.realRoot);
  const state = stateWriter(`${tree}.state.sqlite`);
  let next = 0;
  const take = (size: number) => rels.slice(next, (next = Math.min(rels.length, next + size)));

  const runWorker = () =>
    new Promise<void>((resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: setup });
      let inFlight = 0;
      const send = () => {
        const batch = take(WORKER_BATCH);
        if (batch.length > 0) {
          inFlight++;
          worker.postMessage(batch);
        } else if (inFlight === 0) {
          void worker.terminate().then(() => resolve());
        }
      };
      worker.on("message", (answers: PostFacts[]) => {
        inFlight--;
        answers.forEach(state.put);
        send();
      });
      worker.on("error", reject);
      send();
      send();
    });
  const runHere = async () => {
    const batchHere = postPipeline(setup);
    for (let batch = take(OWN_BATCH); batch.length > 0; batch = take(OWN_BATCH)) {
      (await batchHere(batch)).forEach(state.put);
      // A parse that needs no lexer never waits: a turn of the event loop takes in the workers' answers.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await Promise.all([...Array.from({ length: threads - 1 }, runWorker), runHere()]);
  const { posts, files } = state.close();
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`${JSON.stringify({ posts, files, threads, ms, rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20) })}\n`);
}

if (!isMainThread) {
  const batch = postPipeline(workerData as Setup);
  parentPort!.on("message", (rels: string[]) => void batch(rels).then((answers) => parentPort!.postMessage(answers)));
} else {
  const [content, db, tree, threads = "2"] = process.argv.slice(2);
  if (!content || !db || !tree || !(Number(threads) >= 1)) {
    process.stderr.write("usage: node dist/bench/fused-pipeline.js <content> <db> <tree> [threads]\n");
    process.exitCode = 2;
  } else {
    await main(content, db, tree, Math.floor(Number(threads)));
  }
}
