/**
 * The markdown tables the benchmark prints: one with a row per measurement and
 * a column per organization size, one for the many-organizations corpus and
 * start-up, and for each target the size it is judged at and whether this run
 * met it. Targets are figures to watch, not pass/fail tests.
 */
import os from "node:os";
import type { OrgsResult, SizeResult, StepName, StepResult } from "./build-steps.js";
import type { EdgeResult } from "./edge-bench.js";
import type { ServeResult } from "./serve-bench.js";
import type { StartupResult } from "./startup.js";

export interface RunResult {
  sizes: SizeResult[];
  /** The many-organizations corpus, null when not run. */
  orgs: OrgsResult | null;
  startup: StartupResult | null;
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

const verdictText = (v: Verdict, where: string) => `**${v.met ? "met" : "missed"}**: ${v.figure} (${where})`;

interface Target {
  label: string;
  /** The sizes the target is judged at, each with its limit (issue #22 sets a tighter one at 100k). */
  limits: [posts: number, limit: number][];
  /** When none of those sizes ran (quick mode), the largest size run gives a hint, against the first size's limit. */
  fallback: boolean;
  judge: (size: SizeResult, limit: number) => Verdict | null;
}

/** `≤ 0.4× floor (10k), ≤ 0.1× floor (100k)`; sizes that share a limit are named together. */
function limitsLabel(limits: Target["limits"], unit: (limit: number) => string): string {
  const byLimit = new Map<number, number[]>();
  for (const [posts, limit] of limits) byLimit.set(limit, [...(byLimit.get(limit) ?? []), posts]);
  return [...byLimit].map(([limit, posts]) => `≤ ${unit(limit)} (${posts.map(sizeName).join(", ")})`).join(", ");
}

function judged(target: Target, sizes: readonly SizeResult[]): string {
  const verdict = (size: SizeResult, limit: number, where: string) => {
    const v = target.judge(size, limit);
    return v ? verdictText(v, where) : `not measured (${where})`;
  };
  const exact = target.limits.map(([posts, limit]) => ({ posts, limit, size: sizes.find((s) => s.posts === posts) }));
  if (exact.some((e) => e.size)) {
    return exact.map(({ posts, limit, size }) => (size ? verdict(size, limit, sizeName(posts)) : `not measured (needs ${sizeName(posts)})`)).join("; ");
  }
  const largest = [...sizes].sort((a, b) => b.posts - a.posts)[0];
  const wanted = target.limits.map(([posts]) => sizeName(posts)).join(", ");
  const [firstPosts, firstLimit] = target.limits[0]!;
  if (target.fallback && largest && target.judge(largest, firstLimit)) {
    const against = target.limits.some(([, limit]) => limit !== firstLimit) ? `, against ${sizeName(firstPosts)}'s limit` : "";
    return verdict(largest, firstLimit, `${sizeName(largest.posts)} only; target is for ${wanted}${against}`);
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

const floorTarget = (step: StepName, limits: Target["limits"]): Target => ({
  label: limitsLabel(limits, (max) => `${max}× floor`),
  limits,
  fallback: true,
  judge: (size, max) => {
    const ratio = ratioToFloor(size, step);
    return ratio === null ? null : { met: ratio <= max, figure: `${times(ratio)} floor` };
  },
});

const rssTarget = (step: StepName, limits: Target["limits"]): Target => ({
  label: limitsLabel(limits, (max) => `${max} MiB`),
  limits,
  fallback: false,
  judge: (size, maxMiB) => {
    const kib = size.steps[step]?.rssKiB;
    return kib == null ? null : { met: kib <= maxMiB * 1024, figure: mib(kib) };
  },
});

/** Issue #22's targets, each at the sizes it names. */
const REBUILD_LIMITS: Target["limits"] = [
  [10_000, 0.6],
  [100_000, 0.15],
];
const TARGETS: Partial<Record<StepName, Target>> = {
  full: floorTarget("full", [
    [10_000, 1.5],
    [100_000, 1.5],
  ]),
  noop: floorTarget("noop", [
    [10_000, 0.4],
    [100_000, 0.1],
  ]),
  edit: floorTarget("edit", REBUILD_LIMITS),
  add: floorTarget("add", REBUILD_LIMITS),
  delete: floorTarget("delete", REBUILD_LIMITS),
  block: floorTarget("block", REBUILD_LIMITS),
  fresh: floorTarget("fresh", [
    [10_000, 0.6],
    [100_000, 0.2],
  ]),
};

const RSS_TARGETS: [StepName, string, Target][] = [
  ["full", "peak RSS of the full build", rssTarget("full", [[100_000, 512]])],
  ["noop", "peak RSS of the no-op rebuild", rssTarget("noop", [[100_000, 256]])],
  ["edit", "peak RSS of the rebuild after editing one post", rssTarget("edit", [[100_000, 256]])],
];

/** `--org` after one edit, against the whole corpus's floor. */
const ORG_EDIT_LIMIT = 0.1;
/** `cdsnap --help` against `node -e 0`. */
const STARTUP_LIMIT = 1.5;

const STEP_ROWS: [StepName, string][] = [
  ["floor", "floor: read every source once, write every output once (one process, sync calls)"],
  ["full", "full build (fresh --out)"],
  ["noop", "no-op rebuild"],
  ["firstEdit", "first rebuild after the full build, one post edited (every live file linked into a second generation)"],
  ["edit", "rebuild after editing one post"],
  ["add", "rebuild after adding one post"],
  ["delete", "rebuild after deleting one post"],
  ["block", "rebuild after changing one block (SQLite)"],
  ["fresh", "fresh checkout (posts copied anew, --out and its state kept), nothing changed"],
  ["freshEdit", "fresh checkout, one post edited"],
];

const markdownTable = (header: string[], rows: string[][], numeric: (column: number) => boolean) =>
  [header, header.map((_, i) => (numeric(i) ? "---:" : "---")), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n");

export function renderTable(run: RunResult): string {
  const { sizes } = run;
  const header = ["measurement", ...sizes.map((s) => `${sizeName(s.posts)} posts`), "target", "result"];
  const rows: string[][] = [];
  const row = (label: string, cells: string[], target = "", result = "") => rows.push([label, ...cells, target, result]);

  row("output tree", sizes.map((s) => `${int(s.outputFiles)} files, ${(s.outputBytes / MiB).toFixed(0)} MiB`));
  for (const [step, label] of STEP_ROWS) {
    const target = TARGETS[step];
    const cells = sizes.map((s) => stepCell(s, step));
    if (target) row(label, cells, target.label, judged(target, sizes));
    else if (step === "freshEdit" || step === "firstEdit") row(label, cells, "–", "information only (no target)");
    else row(label, cells);
  }
  for (const [step, label, target] of RSS_TARGETS) {
    row(label, sizes.map((s) => mib(s.steps[step]?.rssKiB ?? null)), target.label, judged(target, sizes));
  }
  if (run.diskDir) {
    const where = `on disk (${run.diskDir.fs}), information only`;
    row(`floor ${where}`, sizes.map((s) => stepCell(s, "diskFloor")), "–", "information only");
    row(`full build ${where}`, sizes.map((s) => stepCell(s, "diskFull")), "–", "information only");
  }

  const serve = run.serve;
  const at = (cell: string) => sizes.map((s) => (serve && s.posts === serve.posts ? cell : "–"));
  const where = serve && serve.posts !== 10_000 ? ` (${sizeName(serve.posts)} only; target is for 10k)` : " (10k)";
  if (serve) {
    const { patch, contents, pages, blocks } = serve.result;
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
    // A page of the list is a file answer like any other: it should keep contents/{id}'s share of node:http.
    const pageShare = pages.cdsnap / pages.node;
    const idShare = contents.cdsnap / contents.node;
    row(
      "GET contents/page/{n} (pages 1-10): cdsnap serve vs in-memory node:http",
      at(`${int(pages.cdsnap)} vs ${int(pages.node)} req/s · ${pct(pageShare)}`),
      "the share contents/{id} gets (within 10%)",
      `**${pageShare >= idShare * 0.9 ? "met" : "missed"}**: ${pct(pageShare)} against ${pct(idShare)}${where}`,
    );
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

  return markdownTable(header, rows, (i) => i > 0 && i <= sizes.length);
}

/** The many-organizations corpus and start-up: one figure each, so a table of its own. */
export function renderOtherTable(run: RunResult): string | null {
  const { orgs, startup } = run;
  if (!orgs && !startup) return null;
  const rows: string[][] = [];
  if (orgs) {
    const where = `${int(orgs.orgs)} orgs × ${int(orgs.postsPerOrg)} posts`;
    rows.push([
      `${where} (${int(orgs.blocksPerOrg)} blocks each, one database): output tree`,
      `${int(orgs.outputFiles)} files, ${(orgs.outputBytes / MiB).toFixed(0)} MiB`,
      "",
      "",
    ]);
    rows.push([`${where}: floor`, stepCell(orgs, "floor"), "", ""]);
    rows.push([`${where}: full build (fresh --out)`, stepCell(orgs, "full"), "–", "information only"]);
    rows.push([`${where}: no-op rebuild`, stepCell(orgs, "noop"), "–", "information only"]);
    const ratio = ratioToFloor(orgs, "orgEdit");
    rows.push([
      `${where}: \`build --org ${orgs.editedOrg}\` after editing one of its posts`,
      stepCell(orgs, "orgEdit"),
      `≤ ${ORG_EDIT_LIMIT}× this corpus's floor`,
      ratio === null ? "not measured" : verdictText({ met: ratio <= ORG_EDIT_LIMIT, figure: `${times(ratio)} floor` }, where),
    ]);
  }
  if (startup) {
    const ratio = startup.cliMs / startup.nodeMs;
    rows.push([
      "start-up: `cdsnap --help` vs `node -e 0`",
      `${startup.cliMs.toFixed(0)} ms vs ${startup.nodeMs.toFixed(0)} ms · ${ratio.toFixed(2)}×`,
      `≤ ${STARTUP_LIMIT}× \`node -e 0\``,
      verdictText({ met: ratio <= STARTUP_LIMIT, figure: `${ratio.toFixed(2)}×` }, `medians of ${startup.runs} runs each`),
    ]);
  }
  return markdownTable(["measurement", "figure", "target", "result"], rows, (i) => i === 1);
}

export function renderReport(run: RunResult): string {
  const notes = [
    `Wall times are the median of ${plural(run.reps, "run")} (100k posts and more: ${plural(run.largeReps, "run")}, to keep the run bounded); RSS is the highest peak over those runs.`,
    `Every build reads a copy of the database and the posts in ${run.benchDir.dir} (${run.benchDir.fs}) and writes there; "× floor" is the median over the floor's median, measured in the same run on the same filesystem.`,
    "Every timed command is a fresh `node` process (startup included), the floor as well. Targets are benchmark figures, not tests.",
  ];
  notes.push(
    "A fresh checkout is what a CI job sees: every post copied anew with `cp -R` into a folder beside the posts and renamed into place (the same bytes, new inodes, mtimes and ctimes), the database, the `--out` tree and its state folder kept from the previous build.",
  );
  if (run.orgs) {
    notes.push(
      `The many-organizations corpus is ${int(run.orgs.orgs)} organizations of ${int(run.orgs.postsPerOrg)} posts and ${int(run.orgs.blocksPerOrg)} blocks each in one database, posts in \`<content>/<orgId>/\`; its floor reads every source and writes its whole tree, and its \`--org\` row is judged against that floor.`,
    );
  }
  if (run.startup) {
    notes.push(
      `Start-up: \`node <cli> --help\` and \`node -e 0\` in turns (${plural(run.startup.runs, "run")} each after one untimed run of each), spawn to exit, output discarded, no RSS hook.`,
    );
  }
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
  const other = renderOtherTable(run);
  return `${machineLine(run)}\n\n${renderTable(run)}\n\n${other === null ? "" : `${other}\n\n`}${notes.join("\n")}\n`;
}
