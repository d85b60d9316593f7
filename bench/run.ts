/**
 * `npm run bench`: generates (or reuses) synthetic organizations of 1k, 10k and
 * 100k posts and a corpus of 500 organizations × 20 posts, measures the CLI's
 * start-up, the floor, the full build, the rebuilds and the server on tmpfs,
 * the floor and the full build once more on disk (for information), and prints
 * the markdown tables (also written to bench/last-run.md).
 *
 *   BENCH_QUICK=1               1k posts and 50 organizations only (for developing the bench)
 *   BENCH_SIZES=1000,10000      the sizes to run (default 1000,10000,100000)
 *   BENCH_ORGS=500x20           the many-organizations corpus, organizations x posts each (0: skipped)
 *   BENCH_STARTUP_RUNS=15       runs of `cdsnap --help` and of `node -e 0` each
 *   BENCH_REPEAT=3              repetitions of each timed step (median reported)
 *   BENCH_LARGE_REPEAT=1        repetitions at 100k posts and more
 *   BENCH_HTTP_SECONDS=10       duration of each HTTP load run
 *   BENCH_SERVE_SIZE=10000      the size the HTTP benchmark runs on (1000 in quick mode)
 *   BENCH_PARTS=builds,http     what to measure; `http` alone builds the serve size once and loads the server
 *   BENCH_DIR=/dev/shm          where every measured build reads and writes (default /dev/shm when writable, else the OS temp folder)
 *   BENCH_DISK_DIR=/tmp         where the information-only disk floor and full build run (default the OS temp folder)
 *   BENCH_DISK=0                skips the disk measurements
 */
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  DISK_STEPS,
  editedOrgOf,
  makeWorkOrg,
  makeWorkTree,
  measureChanges,
  measureEdit,
  measureFresh,
  measureFull,
  measureNoop,
  measureOrgEdit,
  type OrgsResult,
  type SizeResult,
} from "./build-steps.js";
import { ensureOrg, ensureOrgs } from "./cache.js";
import { ROOT, benchDir, describeCode, diskDir, filesystemType, makeTemp, progress, removeTemp, snapshotCli } from "./measure.js";
import { benchEdge } from "./edge-bench.js";
import { benchServe, type ServeInput } from "./serve-bench.js";
import { measureStartup } from "./startup.js";
import { renderReport, type RunResult } from "./table.js";

const ORG_ID = "bench";
const SEED = 20260101;
/** At and above this size each step runs BENCH_LARGE_REPEAT times. */
const LARGE = 100_000;
/**
 * Blocks per organization of the many-organizations corpus: an organization
 * of 20 posts with the 2,000 blocks of the large ones would make a 1.2 GB
 * database and a tree of 1.8 million files, most of it blocks.
 */
const BLOCKS_PER_SMALL_ORG = 20;

function numberList(value: string | undefined, fallback: number[]): number[] {
  if (!value) return fallback;
  const list = value.split(",").map((v) => Number(v.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`cannot read "${value}" as a list of post counts`);
  return list;
}

/** `500x20` → 500 organizations of 20 posts; `0` → none. */
function orgsCorpus(value: string | undefined, fallback: [number, number]): [number, number] | null {
  if (value === "0") return null;
  if (!value) return fallback;
  const match = /^(\d+)x(\d+)$/.exec(value.trim());
  const [orgs, posts] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  if (orgs < 1 || posts < 1) throw new Error(`BENCH_ORGS must read <organizations>x<posts each> (500x20) or 0, not "${value}"`);
  return [orgs, posts];
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not "${raw}"`);
  return n;
}

async function main(): Promise<void> {
  const quick = process.env.BENCH_QUICK === "1";
  const sizes = quick ? [1000] : numberList(process.env.BENCH_SIZES, [1000, 10_000, 100_000]);
  const corpus = orgsCorpus(process.env.BENCH_ORGS, quick ? [50, 20] : [500, 20]);
  const startupRuns = Math.round(positive("BENCH_STARTUP_RUNS", 15));
  const reps = Math.round(positive("BENCH_REPEAT", 3));
  const largeReps = Math.round(positive("BENCH_LARGE_REPEAT", 1));
  const seconds = positive("BENCH_HTTP_SECONDS", 10);
  const serveSize = quick ? 1000 : Math.round(positive("BENCH_SERVE_SIZE", 10_000));
  const parts = new Set((process.env.BENCH_PARTS ?? "builds,http").split(",").map((p) => p.trim()));
  for (const part of parts) if (part !== "builds" && part !== "http") throw new Error(`BENCH_PARTS knows builds and http, not "${part}"`);
  const measureBuilds = parts.has("builds");
  const measureHttp = parts.has("http");
  const base = benchDir();
  // The disk figures belong to the builds part.
  const disk = measureBuilds ? diskDir() : null;

  snapshotCli();
  const run: RunResult = {
    sizes: [],
    orgs: null,
    startup: null,
    serve: null,
    edge: null,
    reps: measureBuilds ? reps : 1,
    largeReps,
    benchDir: { dir: base, fs: filesystemType(base) },
    diskDir: disk === null ? null : { dir: disk, fs: filesystemType(disk) },
    code: describeCode(),
    loadBefore: os.loadavg(),
    loadAfter: [],
    startedAt: new Date(),
  };
  if (measureBuilds) {
    progress(`start-up: cdsnap --help and node -e 0, ${startupRuns} runs each`);
    run.startup = await measureStartup(startupRuns);
  }
  const allSizes = measureBuilds ? sizes : [serveSize];
  for (const posts of [...new Set(allSizes)].sort((a, b) => a - b)) {
    const org = ensureOrg(ORG_ID, posts, SEED);
    const large = posts >= LARGE;
    const times = large ? largeReps : reps;
    const workDir = makeTemp(`cdsnap-bench-${posts}-`, base);
    progress(`${posts} posts: copying the database and the posts to ${workDir}`);
    const work = await makeWorkOrg(org, base, workDir);
    const result: SizeResult = { posts, outputFiles: 0, outputBytes: 0, steps: {} };
    progress(`${posts} posts: full builds, floor, rebuilds in ${base} (${times === 1 ? "1 run" : `${times} runs`} each)`);
    await measureFull(work, measureBuilds ? times : 1, result);
    if (measureBuilds) {
      await measureNoop(work, times, result);
      await measureEdit(work, times, result);
      await measureChanges(work, times, result);
      await measureFresh(work, times, result);
    }
    if (measureHttp && posts === serveSize) {
      const input: ServeInput = {
        db: work.db,
        content: work.content,
        out: work.out,
        orgId: org.orgId,
        readKey: org.readKey,
        writeKey: org.writeKey,
        contentIds: org.samplePublished.map((p) => p.id),
        seconds,
      };
      run.serve = { posts, result: await benchServe(input) };
      run.edge = { posts, result: await benchEdge(input) };
    }
    removeTemp(path.dirname(work.out));
    removeTemp(workDir);

    if (disk !== null) {
      // After the HTTP part, and with the bench folder's copy gone: the disk's
      // writeback does not overlap the figures that count.
      const diskWorkDir = makeTemp(`cdsnap-bench-${posts}-`, disk);
      progress(`${posts} posts: copying the database and the posts to ${diskWorkDir}`);
      const diskWork = await makeWorkOrg(org, disk, diskWorkDir);
      progress(`${posts} posts: full build and floor on disk in ${disk}, information only (1 run each)`);
      await measureFull(diskWork, 1, result, DISK_STEPS);
      removeTemp(path.dirname(diskWork.out));
      removeTemp(diskWorkDir);
    }
    run.sizes.push(result);
  }
  if (measureBuilds && corpus !== null) run.orgs = await measureOrgs(corpus[0], corpus[1], base, reps);
  run.loadAfter = os.loadavg();

  const report = renderReport(run);
  writeFileSync(path.join(ROOT, "bench", "last-run.md"), report);
  process.stdout.write(report);
}

async function measureOrgs(orgs: number, postsPerOrg: number, base: string, reps: number): Promise<OrgsResult> {
  const corpus = ensureOrgs(orgs, postsPerOrg, BLOCKS_PER_SMALL_ORG, SEED);
  const label = `${orgs} organizations × ${postsPerOrg} posts`;
  const workDir = makeTemp(`cdsnap-bench-orgs-${orgs}x${postsPerOrg}-`, base);
  progress(`${label}: copying the database and the posts to ${workDir}`);
  const work = await makeWorkTree(corpus, base, workDir);
  const result: OrgsResult = {
    posts: corpus.posts,
    outputFiles: 0,
    outputBytes: 0,
    steps: {},
    orgs,
    postsPerOrg,
    blocksPerOrg: corpus.blocksPerOrg,
    editedOrg: editedOrgOf(corpus).orgId,
  };
  progress(`${label}: full builds, floor, rebuilds in ${base} (${reps === 1 ? "1 run" : `${reps} runs`} each)`);
  await measureFull(work, reps, result);
  await measureNoop(work, reps, result);
  await measureOrgEdit(work, corpus, reps, result);
  removeTemp(path.dirname(work.out));
  removeTemp(workDir);
  return result;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
