/**
 * The build measurements of one organization size: the floor, the full build
 * and the rebuilds after each kind of change, each repeated and reported as the
 * median wall time (and the highest peak RSS seen). Changes are made to a
 * working copy, never to the cache, and undone after each step.
 */
import Database from "better-sqlite3";
import { cp, copyFile, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { makeFloorPlan, totalBytes, writeFloorPlan } from "./floor-plan.js";
import type { GeneratedOrg } from "./generate.js";
import { CLI, ROOT, makeTemp, median, progress, removeTemp, runMeasured } from "./measure.js";
import { renderPost } from "./post.js";

export interface StepResult {
  /** Median wall time, ms. */
  ms: number;
  /** Highest peak RSS over the repetitions, KiB. */
  rssKiB: number | null;
  /** Files the build reported writing (median), null for the floor. */
  filesWritten: number | null;
  runs: number;
}

export type StepName = "floor" | "full" | "noop" | "edit" | "add" | "delete" | "block";

export interface SizeResult {
  posts: number;
  outputFiles: number;
  outputBytes: number;
  steps: Partial<Record<StepName, StepResult>>;
}

/** The organization as this size's builds see it: a private db, maybe a private content copy. */
export interface WorkOrg {
  org: GeneratedOrg;
  db: string;
  content: string;
  /** The live tree the rebuilds update (kept for the serving benchmark). */
  out: string;
}

interface Sample {
  ms: number;
  rssKiB: number | null;
  filesWritten: number | null;
  /** The build's own phase timings, when its report has them (progress output only). */
  phases?: string;
}

function summarize(samples: readonly Sample[]): StepResult {
  const rss = samples.map((s) => s.rssKiB).filter((v): v is number => v !== null);
  const files = samples.map((s) => s.filesWritten).filter((v): v is number => v !== null);
  return {
    ms: median(samples.map((s) => s.ms)),
    rssKiB: rss.length > 0 ? Math.max(...rss) : null,
    filesWritten: files.length > 0 ? median(files) : null,
    runs: samples.length,
  };
}

async function build(work: WorkOrg, out = work.out): Promise<Sample> {
  const run = await runMeasured([CLI, "build", "--db", work.db, "--content", work.content, "--out", out, "--json"]);
  let filesWritten: number | null = null;
  let phases: string | undefined;
  try {
    const report = JSON.parse(run.stdout.trim().split("\n").pop() ?? "") as {
      orgs?: { filesWritten?: number }[];
      phasesMs?: Record<string, number>;
    };
    const counts = (report.orgs ?? []).map((o) => o.filesWritten);
    if (counts.every((n): n is number => typeof n === "number")) filesWritten = counts.reduce((a, b) => a + b, 0);
    if (report.phasesMs) phases = Object.entries(report.phasesMs).map(([name, ms]) => `${name} ${ms}`).join(", ");
  } catch {
    // The report's shape is the build's to change; the time still counts.
  }
  return { ms: run.ms, rssKiB: run.maxRssKiB, filesWritten, phases };
}

async function repeat(times: number, label: string, fn: (rep: number) => Promise<Sample>): Promise<StepResult> {
  const samples: Sample[] = [];
  for (let rep = 0; rep < times; rep++) {
    const sample = await fn(rep);
    progress(`  ${label} #${rep + 1}: ${(sample.ms / 1000).toFixed(2)} s, ${sample.filesWritten === null ? "" : `${sample.filesWritten} written, `}peak RSS ${sample.rssKiB === null ? "?" : Math.round(sample.rssKiB / 1024)} MiB${sample.phases ? ` (ms: ${sample.phases})` : ""}`);
    samples.push(sample);
  }
  return summarize(samples);
}

/** A private copy of the database, and of the posts when they will be changed. */
export async function makeWorkOrg(org: GeneratedOrg, dir: string, copyContent: boolean): Promise<WorkOrg> {
  const db = path.join(dir, "cdsnap.db");
  await copyFile(org.db, db);
  let content = org.content;
  if (copyContent) {
    content = path.join(dir, "content");
    await cp(org.content, content, { recursive: true });
  }
  return { org, db, content, out: path.join(dir, "site", "out") };
}

/** Full builds into fresh folders (the last one stays as `work.out`), then the floor. */
export async function measureFull(work: WorkOrg, reps: number, result: SizeResult): Promise<void> {
  const dirs: string[] = [];
  result.steps.full = await repeat(reps, "full build", async () => {
    const dir = makeTemp("cdsnap-bench-full-");
    dirs.push(dir);
    if (dirs.length > 1) removeTemp(dirs[dirs.length - 2]!);
    return build(work, path.join(dir, "out"));
  });
  // The rebuilds continue from the last full build's tree.
  const last = dirs[dirs.length - 1]!;
  work.out = path.join(last, "out");

  const plan = await makeFloorPlan(work.content, work.db, work.out);
  result.outputFiles = plan.outputs.length;
  result.outputBytes = totalBytes(plan);
  const planDir = makeTemp("cdsnap-bench-floor-");
  const planFile = path.join(planDir, "plan.json");
  await writeFloorPlan(planFile, plan);
  result.steps.floor = await repeat(reps, "floor", async (rep) => {
    const out = path.join(planDir, `out-${rep}`);
    const run = await runMeasured([path.join(ROOT, "dist", "bench", "floor.js"), planFile, out]);
    removeTemp(out);
    return { ms: run.ms, rssKiB: run.maxRssKiB, filesWritten: null };
  });
  removeTemp(planDir);
}

export async function measureNoop(work: WorkOrg, reps: number, result: SizeResult): Promise<void> {
  result.steps.noop = await repeat(reps, "no-op rebuild", () => build(work));
}

/** Edit, add, delete, block: each change is undone afterwards (with an untimed rebuild). */
export async function measureChanges(work: WorkOrg, reps: number, result: SizeResult): Promise<void> {
  const { org } = work;
  const target = org.samplePublished[Math.floor(org.samplePublished.length / 2)]!;
  const postFile = path.join(work.content, target.relPath);
  const original = await readFile(postFile);
  result.steps.edit = await repeat(reps, "edit one post", async (rep) => {
    await writeFile(postFile, Buffer.concat([original, Buffer.from(`\nA paragraph added by the benchmark, edit number ${rep + 1}.\n`)]));
    return build(work);
  });
  await writeFile(postFile, original);
  await build(work);

  const added: string[] = [];
  result.steps.add = await repeat(reps, "add one post", async (rep) => {
    const post = renderPost(org.orgId, org.seed, org.posts + 1 + rep, { status: "published" });
    const file = path.join(work.content, post.relPath);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, post.text);
    added.push(file);
    return build(work);
  });
  // Deleting the posts just added brings the organization back to where it was.
  result.steps.delete = await repeat(reps, "delete one post", async () => {
    await unlink(added.pop()!);
    return build(work);
  });

  const { id, position, value } = org.editableBlock;
  const setField = (json: string) => {
    const db = new Database(work.db);
    try {
      db.prepare("UPDATE block_fields SET value = ? WHERE org_id = ? AND block_id = ? AND position = ?").run(json, org.orgId, id, position);
    } finally {
      db.close();
    }
  };
  result.steps.block = await repeat(reps, "change one block", async (rep) => {
    setField(JSON.stringify(`Changed by the benchmark, change number ${rep + 1}.`));
    return build(work);
  });
  setField(value);
  await build(work);
}
