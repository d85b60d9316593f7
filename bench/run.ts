/**
 * `npm run bench`: generates (or reuses) synthetic organizations of 1k, 10k and
 * 100k posts, measures the floor, the full build, the rebuilds and the server
 * on tmpfs, the floor and the full build once more on disk (for information),
 * and prints one markdown table (also written to bench/last-run.md).
 *
 *   BENCH_QUICK=1               1k posts only (for developing the bench)
 *   BENCH_SIZES=1000,10000      the sizes to run (default 1000,10000,100000)
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
import { DISK_STEPS, measureChanges, measureEdit, measureFull, measureNoop, makeWorkOrg, type SizeResult } from "./build-steps.js";
import { ensureOrg } from "./cache.js";
import { ROOT, benchDir, describeCode, diskDir, filesystemType, makeTemp, progress, removeTemp, snapshotCli } from "./measure.js";
import { benchEdge } from "./edge-bench.js";
import { benchServe, type ServeInput } from "./serve-bench.js";
import { renderReport, type RunResult } from "./table.js";

const ORG_ID = "bench";
const SEED = 20260101;
/** At and above this size only the full build, the no-op rebuild and the one-post edit run. */
const LARGE = 100_000;

function numberList(value: string | undefined, fallback: number[]): number[] {
  if (!value) return fallback;
  const list = value.split(",").map((v) => Number(v.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`cannot read "${value}" as a list of post counts`);
  return list;
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
      if (!large) await measureChanges(work, times, result);
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
  run.loadAfter = os.loadavg();

  const report = renderReport(run);
  writeFileSync(path.join(ROOT, "bench", "last-run.md"), report);
  process.stdout.write(report);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
