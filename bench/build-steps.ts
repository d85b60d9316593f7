/**
 * The build measurements of one organization size, or of the many-organizations
 * corpus: the floor, the full build and the rebuilds after each kind of change,
 * each repeated and reported as the median wall time (and the highest peak RSS
 * seen). Every build reads a working copy of the database and the posts under
 * the work folder (tmpfs by default, see measure.ts), never the cache on disk;
 * changes are made to that copy and undone after each step.
 */
import Database from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { copyFile, mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { makeFloorPlan, totalBytes, writeFloorPlan } from "./floor-plan.js";
import type { GeneratedOrg, GeneratedOrgs } from "./generate.js";
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

/**
 * `firstEdit`: the first rebuild after the full build, one post edited: the
 * store has no second generation yet, so every live file is linked into a new
 * one (every later build turns the generation before into the next by
 * replaying changes); measured once, apart from `edit`, which it would skew.
 * `fresh` and `freshEdit`: a build after the posts were checked out anew (the
 * same bytes in new files), with nothing else changed or with one post edited.
 * `orgEdit`: a `--org` rebuild of the many-organizations corpus after one of
 * that organization's posts was edited.
 * `diskFloor` and `diskFull`: the floor and the full build again on the disk volume, for information.
 */
export type StepName =
  | "floor"
  | "full"
  | "noop"
  | "firstEdit"
  | "edit"
  | "add"
  | "delete"
  | "block"
  | "fresh"
  | "freshEdit"
  | "orgEdit"
  | "diskFloor"
  | "diskFull";

export interface SizeResult {
  posts: number;
  outputFiles: number;
  outputBytes: number;
  steps: Partial<Record<StepName, StepResult>>;
}

/** The many-organizations corpus: its figures, and its shape for the table. */
export interface OrgsResult extends SizeResult {
  orgs: number;
  postsPerOrg: number;
  blocksPerOrg: number;
  /** The organization the `--org` rebuild names. */
  editedOrg: string;
}

/** The sources as a run's builds see them: a private copy of the db and of the posts. */
export interface WorkTree {
  /** The folder temporary build outputs go under (the bench folder or the disk folder). */
  base: string;
  db: string;
  content: string;
  /** The live tree the rebuilds update (kept for the serving benchmark). */
  out: string;
}

/** One organization size's working copy. */
export interface WorkOrg extends WorkTree {
  org: GeneratedOrg;
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

async function build(work: WorkTree, out = work.out, extra: readonly string[] = []): Promise<Sample> {
  const run = await runMeasured([CLI, "build", "--db", work.db, "--content", work.content, "--out", out, "--json", ...extra]);
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

/** `cp -R` rather than fs.cp, which takes minutes over 100k files. */
function copyTree(from: string, to: string): void {
  execFileSync("cp", ["-R", from, to], { stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * A private copy of the database and of every post in `dir` (a temporary folder
 * under `base`): the builds read that copy, on the filesystem being measured,
 * at every size.
 */
export async function makeWorkTree(sources: { db: string; content: string }, base: string, dir: string): Promise<WorkTree> {
  const db = path.join(dir, "cdsnap.db");
  await copyFile(sources.db, db);
  const content = path.join(dir, "content");
  copyTree(sources.content, content);
  return { base, db, content, out: path.join(dir, "site", "out") };
}

export async function makeWorkOrg(org: GeneratedOrg, base: string, dir: string): Promise<WorkOrg> {
  return { ...(await makeWorkTree(org, base, dir)), org };
}

/** Which rows a {@link measureFull} fills: the main ones, or the information-only disk ones. */
export interface FullSteps {
  full: StepName;
  floor: StepName;
  /** Prefix of the progress lines. */
  label: string;
  /** Whether the output tree's size is taken from this tree (the main measurement). */
  recordTree: boolean;
}

export const MAIN_STEPS: FullSteps = { full: "full", floor: "floor", label: "", recordTree: true };
export const DISK_STEPS: FullSteps = { full: "diskFull", floor: "diskFloor", label: "on disk: ", recordTree: false };

/**
 * Full builds into fresh folders under `work.base` (the last one stays as
 * `work.out`), then the floor: the plan is taken from that built tree, and each
 * floor run writes into a fresh folder beside it.
 */
export async function measureFull(work: WorkTree, reps: number, result: SizeResult, steps: FullSteps = MAIN_STEPS): Promise<void> {
  const dirs: string[] = [];
  result.steps[steps.full] = await repeat(reps, `${steps.label}full build`, async () => {
    const dir = makeTemp("cdsnap-bench-full-", work.base);
    dirs.push(dir);
    if (dirs.length > 1) removeTemp(dirs[dirs.length - 2]!);
    return build(work, path.join(dir, "out"));
  });
  // The rebuilds continue from the last full build's tree.
  const last = dirs[dirs.length - 1]!;
  work.out = path.join(last, "out");

  const plan = await makeFloorPlan(work.content, work.db, work.out);
  if (steps.recordTree) {
    result.outputFiles = plan.outputs.length;
    result.outputBytes = totalBytes(plan);
  }
  const planDir = makeTemp("cdsnap-bench-floor-", work.base);
  const planFile = path.join(planDir, "plan.json");
  await writeFloorPlan(planFile, plan);
  result.steps[steps.floor] = await repeat(reps, `${steps.label}floor`, async (rep) => {
    const out = path.join(planDir, `out-${rep}`);
    const run = await runMeasured([path.join(ROOT, "dist", "bench", "floor.js"), planFile, out]);
    removeTemp(out);
    return { ms: run.ms, rssKiB: run.maxRssKiB, filesWritten: null };
  });
  removeTemp(planDir);
}

export async function measureNoop(work: WorkTree, reps: number, result: SizeResult): Promise<void> {
  result.steps.noop = await repeat(reps, "no-op rebuild", () => build(work));
}

const editedPost = (org: GeneratedOrg) => org.samplePublished[Math.floor(org.samplePublished.length / 2)]!;

const appendParagraph = (original: Buffer, rep: number) =>
  Buffer.concat([original, Buffer.from(`\nA paragraph added by the benchmark, edit number ${rep + 1}.\n`)]);

/**
 * A paragraph appended to the post at `relPath` before each timed build (after
 * `before`, when given); the post is restored afterwards and rebuilt untimed,
 * with the same arguments.
 */
async function measurePostEdit(
  work: WorkTree,
  relPath: string,
  step: StepName,
  label: string,
  reps: number,
  result: SizeResult,
  options: { before?: () => Promise<void>; extra?: readonly string[] } = {},
): Promise<void> {
  const postFile = path.join(work.content, relPath);
  const original = await readFile(postFile);
  result.steps[step] = await repeat(reps, label, async (rep) => {
    await options.before?.();
    await writeFile(postFile, appendParagraph(original, rep));
    return build(work, work.out, options.extra);
  });
  await writeFile(postFile, original);
  await build(work, work.out, options.extra);
}

/**
 * A paragraph appended to one published post; undone afterwards (with an
 * untimed rebuild): once as the first rebuild after the full build, then
 * `reps` times as any later one.
 */
export async function measureEdit(work: WorkOrg, reps: number, result: SizeResult): Promise<void> {
  await measurePostEdit(work, editedPost(work.org).relPath, "firstEdit", "first rebuild after the full build (one post edited)", 1, result);
  await measurePostEdit(work, editedPost(work.org).relPath, "edit", "edit one post", reps, result);
}

/**
 * What a CI job's checkout does to the posts: the same bytes in new files, so
 * new inodes and new mtimes and ctimes, at the same path. The copy is made
 * beside the folder and renamed into place, before the timed build starts.
 */
async function checkOutAnew(content: string): Promise<void> {
  const fresh = `${content}.checkout`;
  const old = `${content}.before-checkout`;
  copyTree(content, fresh);
  await rename(content, old);
  await rename(fresh, content);
  execFileSync("rm", ["-rf", old]);
}

/**
 * A build after the posts were checked out anew, the `--out` tree and its
 * state folder kept from the previous build: with nothing changed (`fresh`),
 * then with one post edited (`freshEdit`, undone afterwards).
 */
export async function measureFresh(work: WorkOrg, reps: number, result: SizeResult): Promise<void> {
  result.steps.fresh = await repeat(reps, "fresh checkout, nothing changed", async () => {
    await checkOutAnew(work.content);
    return build(work);
  });
  await measurePostEdit(work, editedPost(work.org).relPath, "freshEdit", "fresh checkout, one post edited", reps, result, {
    before: () => checkOutAnew(work.content),
  });
}

/** The organization in the middle of the corpus, whose `--org` rebuild is timed. */
export const editedOrgOf = (corpus: GeneratedOrgs) => corpus.orgs[Math.floor(corpus.orgs.length / 2)]!;

/** The many-organizations corpus: one post of one organization edited, then `build --org` of that organization alone. */
export async function measureOrgEdit(work: WorkTree, corpus: GeneratedOrgs, reps: number, result: SizeResult): Promise<void> {
  const { orgId, samplePublished } = editedOrgOf(corpus);
  await measurePostEdit(work, samplePublished.relPath, "orgEdit", `edit one post of ${orgId}, build --org ${orgId}`, reps, result, {
    extra: ["--org", orgId],
  });
}

/** Add, delete, block: each change is undone afterwards (with an untimed rebuild). */
export async function measureChanges(work: WorkOrg, reps: number, result: SizeResult): Promise<void> {
  const { org } = work;
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
