/**
 * The one markdown table the benchmark prints: a row per measurement, a column
 * per organization size, and for each target the size it is judged at and
 * whether this run met it. Targets are figures to watch, not pass/fail tests.
 */
import os from "node:os";
import type { SizeResult, StepName, StepResult } from "./build-steps.js";
import type { EdgeResult } from "./edge-bench.js";
import type { ServeResult } from "./serve-bench.js";

export interface RunResult {
  sizes: SizeResult[];
  /** The size the serving benchmark ran on, and its figures. */
  serve: { posts: number; result: ServeResult } | null;
  edge: { posts: number; result: EdgeResult } | null;
  reps: number;
  largeReps: number;
  /** Where the measured builds ran (BENCH_DIR) and its filesystem type. */
  benchDir: { dir: string; fs: string };
  /** Where the information-only disk rows ran (BENCH_DISK_DIR), null when skipped. */
  diskDir: { dir: string; fs: string } | null;
  /** The commit measured (see measure.ts describeCode). */
  code: string;
  loadBefore: number[];
  loadAfter: number[];
  startedAt: Date;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

const secs = (ms: number) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 1000).toFixed(2)} s`);
const mib = (kib: number | null) => (kib === null ? "? MiB" : `${Math.round(kib / 1024)} MiB`);
const pct = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;
/** A ratio to the floor: three decimals below 0.1, so that small rebuilds do not all read 0.0x. */
const times = (ratio: number) => `${ratio < 0.1 ? ratio.toFixed(3) : ratio.toFixed(2)}×`;
const int = (n: number) => Math.round(n).toLocaleString("en-US");
const plural = (n: number, word: string) => `${Math.round(n).toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
const sizeName = (posts: number) => (posts >= 1000 && posts % 1000 === 0 ? `${posts / 1000}k` : String(posts));

export function machineLine(run: RunResult): string {
  const cpu = os.cpus()[0]?.model.trim() ?? "unknown CPU";
  const load = (l: number[]) => l.map((v) => v.toFixed(1)).join(" ");
  const disk = run.diskDir ? `disk rows in ${run.diskDir.dir} (${run.diskDir.fs})` : "disk rows skipped";
  return [
    `cdsnap bench, ${run.startedAt.toISOString()}, ${run.code}`,
    `${cpu} × ${os.cpus().length} cores`,
    `${(os.totalmem() / GiB).toFixed(1)} GiB RAM`,
    `node ${process.version}`,
    `${os.type()} ${os.release()}`,
    `measured in ${run.benchDir.dir} (${run.benchDir.fs}), ${disk}`,
    `load average ${load(run.loadBefore)} before, ${load(run.loadAfter)} after`,
  ].join(" · ");
}

interface Verdict {
  met: boolean;
  figure: string;
}

interface Target {
  label: string;
  /** The sizes the target is judged at. */
  posts: number[];
  /** When none of those sizes ran (quick mode), the largest size run gives a hint. */
  fallback: boolean;
  judge: (size: SizeResult) => Verdict | null;
}

function judged(target: Target, sizes: readonly SizeResult[]): string {
  const verdict = (size: SizeResult, where: string) => {
    const v = target.judge(size);
    return v ? `**${v.met ? "met" : "missed"}**: ${v.figure} (${where})` : `not measured (${where})`;
  };
  const exact = target.posts.map((posts) => ({ posts, size: sizes.find((s) => s.posts === posts) }));
  if (exact.some((e) => e.size)) {
    return exact.map(({ posts, size }) => (size ? verdict(size, sizeName(posts)) : `not measured (needs ${sizeName(posts)})`)).join("; ");
  }
  const largest = [...sizes].sort((a, b) => b.posts - a.posts)[0];
  const wanted = target.posts.map(sizeName).join(", ");
  if (target.fallback && largest && target.judge(largest)) {
    return verdict(largest, `${sizeName(largest.posts)} only; target is for ${wanted}`);
  }
  return `not measured (needs ${wanted})`;
}

/** The step's median wall time over the floor's, both measured in this run on the same filesystem. */
function ratioToFloor(size: SizeResult, step: StepName): number | null {
  const s = size.steps[step];
  const floor = size.steps[step === "diskFull" ? "diskFloor" : "floor"];
  return s && floor ? s.ms / floor.ms : null;
}

function stepCell(size: SizeResult, step: StepName): string {
  const s: StepResult | undefined = size.steps[step];
  if (!s) return "–";
  const parts = [secs(s.ms)];
  const ratio = step === "floor" || step === "diskFloor" ? null : ratioToFloor(size, step);
  if (ratio !== null) parts.push(`${times(ratio)} ${step === "diskFull" ? "floor on disk" : "floor"}`);
  if (s.filesWritten !== null) parts.push(`${plural(s.filesWritten, "file")} written`);
  parts.push(`RSS ${mib(s.rssKiB)}`);
  return parts.join(" · ");
}

const floorTarget = (step: StepName, max: number, posts: number[]): Target => ({
  label: `≤ ${max}× floor (${posts.map(sizeName).join(", ")})`,
  posts,
  fallback: true,
  judge: (size) => {
    const ratio = ratioToFloor(size, step);
    return ratio === null ? null : { met: ratio <= max, figure: `${times(ratio)} floor` };
  },
});

const TARGETS: Partial<Record<StepName, Target>> = {
  full: floorTarget("full", 1.5, [10_000, 100_000]),
  noop: floorTarget("noop", 0.25, [10_000, 100_000]),
  edit: floorTarget("edit", 0.25, [10_000, 100_000]),
  add: floorTarget("add", 0.25, [10_000]),
  delete: floorTarget("delete", 0.25, [10_000]),
  block: floorTarget("block", 0.25, [10_000]),
};

const RSS_LIMIT_MIB = 512;
const RSS_TARGET: Target = {
  label: `≤ ${RSS_LIMIT_MIB} MiB (100k)`,
  posts: [100_000],
  fallback: false,
  judge: (size) => {
    const kib = size.steps.full?.rssKiB;
    return kib == null ? null : { met: kib <= RSS_LIMIT_MIB * 1024, figure: mib(kib) };
  },
};

const STEP_ROWS: [StepName, string][] = [
  ["floor", "floor: read every source once, write every output once (one process, sync calls)"],
  ["full", "full build (fresh --out)"],
  ["noop", "no-op rebuild"],
  ["edit", "rebuild after editing one post"],
  ["add", "rebuild after adding one post"],
  ["delete", "rebuild after deleting one post"],
  ["block", "rebuild after changing one block (SQLite)"],
];

export function renderTable(run: RunResult): string {
  const { sizes } = run;
  const header = ["measurement", ...sizes.map((s) => `${sizeName(s.posts)} posts`), "target", "result"];
  const rows: string[][] = [];
  const row = (label: string, cells: string[], target = "", result = "") => rows.push([label, ...cells, target, result]);

  row("output tree", sizes.map((s) => `${int(s.outputFiles)} files, ${(s.outputBytes / MiB).toFixed(0)} MiB`));
  for (const [step, label] of STEP_ROWS) {
    const target = TARGETS[step];
    row(label, sizes.map((s) => stepCell(s, step)), target?.label ?? "", target ? judged(target, sizes) : "");
  }
  row("peak RSS of the full build", sizes.map((s) => mib(s.steps.full?.rssKiB ?? null)), RSS_TARGET.label, judged(RSS_TARGET, sizes));
  if (run.diskDir) {
    const where = `on disk (${run.diskDir.fs}), information only`;
    row(`floor ${where}`, sizes.map((s) => stepCell(s, "diskFloor")), "–", "information only");
    row(`full build ${where}`, sizes.map((s) => stepCell(s, "diskFull")), "–", "information only");
  }

  const serve = run.serve;
  const at = (cell: string) => sizes.map((s) => (serve && s.posts === serve.posts ? cell : "–"));
  const where = serve && serve.posts !== 10_000 ? ` (${sizeName(serve.posts)} only; target is for 10k)` : " (10k)";
  if (serve) {
    const { patch, contents, blocks } = serve.result;
    const failed = patch.failed > 0 ? ` · ${int(patch.failed)} failed` : "";
    row(
      `PATCH business-description, ${16} clients: p50 / p99`,
      at(`${patch.p50} ms / ${patch.p99} ms · ${int(patch.rps)} req/s${failed}`),
      "p99 < 20 ms (10k)",
      `**${patch.p99 < 20 ? "met" : "missed"}**: p99 ${patch.p99} ms${where}`,
    );
    for (const [label, t] of [["GET contents/{id}", contents], ["GET blocks", blocks]] as const) {
      const ratio = t.cdsnap / t.node;
      row(
        `${label}: cdsnap serve vs in-memory node:http`,
        at(`${int(t.cdsnap)} vs ${int(t.node)} req/s · ${pct(ratio)}`),
        "≥ 50% of node:http",
        `**${ratio >= 0.5 ? "met" : "missed"}**: ${pct(ratio)}${where}`,
      );
    }
    const { paths, first } = serve.result.codings;
    for (const { label, runs } of paths) {
      const identity = runs.find((r) => r.coding === "identity")!;
      for (const run of runs) {
        const saved = run.coding === "identity" ? "" : ` · ${pct(1 - run.bytes / identity.bytes)} saved`;
        row(`GET ${label}, ${run.coding}`, at(`${int(run.rps)} req/s · ${int(run.bytes)} B per answer${saved}`), "–", "information only");
      }
    }
    row(
      "one GET of the contents list: first br, first gzip (each compressed by that request), then br again, identity",
      at([first.br, first.gzip, first.brCached, first.identity].map((ms) => `${ms.toFixed(1)} ms`).join(" / ")),
      "–",
      "information only",
    );
  } else {
    row("PATCH latency / GET throughput", at("–"), "p99 < 20 ms; ≥ 50%", "not measured");
  }
  if (run.edge) {
    const { serve: served, edge } = run.edge.result;
    row(
      "GET contents/{id}: edge handler under Node (cdsnap edge serve) vs cdsnap serve",
      sizes.map((s) => (s.posts === run.edge!.posts ? `${int(edge)} vs ${int(served)} req/s · ${pct(edge / served)}` : "–")),
      "–",
      "information only",
    );
  }

  const lines = [header, header.map((_, i) => (i === 0 || i > sizes.length ? "---" : "---:")), ...rows];
  return lines.map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}

export function renderReport(run: RunResult): string {
  const notes = [
    `Wall times are the median of ${plural(run.reps, "run")} (100k posts: ${plural(run.largeReps, "run")}, and only the floor, the full build, the no-op rebuild and the one-post edit, to keep the run bounded); RSS is the highest peak over those runs.`,
    `Every build reads a copy of the database and the posts in ${run.benchDir.dir} (${run.benchDir.fs}) and writes there; "× floor" is the median over the floor's median, measured in the same run on the same filesystem.`,
    "Every timed command is a fresh `node` process (startup included), the floor as well. Targets are benchmark figures, not tests.",
  ];
  if (run.diskDir) {
    notes.push(
      `The disk rows repeat the floor and the full build once each in ${run.diskDir.dir} (${run.diskDir.fs}), sources copied there too: creating tens of thousands of files on a disk volume varies several-fold from run to run, so they are for information and judge nothing.`,
    );
  }
  if (run.serve) {
    notes.push(
      "GET runs alternate between the two servers (2 turns each, after a warm-up). `blocks` answers a list of 2,000 blocks (over 1 MB): with the load generator on the same machine both servers are bound by it and by loopback, so that ratio says little; `contents/{id}` is the telling row.",
    );
  }
  if (run.edge) {
    notes.push(
      "The edge handler under Node reads from the same file cache as `serve` but answers through the fetch API's Request and Response, which it is written in so that the same code runs on Workers: the difference is their cost under Node. Both in turns, as above.",
    );
    if (run.edge.result.failed > 0) notes.push(`Warning: ${run.edge.result.failed} edge GET requests failed.`);
  }
  if (run.serve) {
    notes.push(
      "The coding rows load one path at a time with `Accept-Encoding` set to that coding, through node:http's client on 16 keep-alive connections (autocannon reads binary bodies too slowly to load a compressed answer), each coding warmed up for 2 s, then the three in turns (2 turns each); bytes are the body of one answer, saved is against identity. The single GETs run on a fresh connection each, before any client asked for a coding of that list.",
    );
  }
  if (run.serve && run.serve.result.getFailures > 0) notes.push(`Warning: ${run.serve.result.getFailures} GET requests failed.`);
  return `${machineLine(run)}\n\n${renderTable(run)}\n\n${notes.join("\n")}\n`;
}
