/**
 * The bench's tables: each of issue #22's targets is judged at the sizes it
 * names, against that size's limit, and met or missed as the figures say.
 */
import { expect, test } from "vitest";
import type { OrgsResult, SizeResult, StepName, StepResult } from "../../bench/build-steps.js";
import { renderOtherTable, renderReport, renderTable, type RunResult } from "../../bench/table.js";

const FLOOR_MS = 1000;

/** A step `ratio` times the floor, with `rssMiB` as its peak. */
const step = (ratio: number, rssMiB = 100): StepResult => ({ ms: ratio * FLOOR_MS, rssKiB: rssMiB * 1024, filesWritten: 0, runs: 1 });

function size(posts: number, ratios: Partial<Record<StepName, number>>, rss: Partial<Record<StepName, number>> = {}): SizeResult {
  const steps: SizeResult["steps"] = { floor: step(1) };
  for (const [name, ratio] of Object.entries(ratios) as [StepName, number][]) steps[name] = step(ratio, rss[name]);
  return { posts, outputFiles: 10, outputBytes: 1000, steps };
}

function run(sizes: SizeResult[], extra: Partial<RunResult> = {}): RunResult {
  return {
    sizes,
    orgs: null,
    startup: null,
    serve: null,
    edge: null,
    reps: 3,
    largeReps: 1,
    benchDir: { dir: "/dev/shm", fs: "tmpfs" },
    diskDir: null,
    code: "commit test",
    loadBefore: [0, 0, 0],
    loadAfter: [0, 0, 0],
    startedAt: new Date(0),
    ...extra,
  };
}

/** The cells of the table row whose label starts with `label`. */
function rowOf(table: string, label: string): string[] {
  const line = table.split("\n").find((l) => l.startsWith(`| ${label}`));
  if (!line) throw new Error(`no row "${label}" in\n${table}`);
  return line.slice(2, -2).split(" | ");
}

const resultOf = (table: string, label: string) => rowOf(table, label).at(-1)!;

test("rebuild targets are judged against each size's own limit", () => {
  const table = renderTable(
    run([
      size(10_000, { full: 1.4, noop: 0.35, edit: 0.5, add: 0.7, delete: 0.55, block: 0.59, fresh: 0.5, freshEdit: 0.9 }),
      size(100_000, { full: 1.6, noop: 0.2, edit: 0.14, add: 0.15, delete: 0.16, block: 0.1, fresh: 0.25, freshEdit: 0.3 }),
    ]),
  );
  expect(resultOf(table, "full build")).toBe("**met**: 1.40× floor (10k); **missed**: 1.60× floor (100k)");
  expect(rowOf(table, "no-op rebuild").at(-2)).toBe("≤ 0.4× floor (10k), ≤ 0.1× floor (100k)");
  expect(resultOf(table, "no-op rebuild")).toBe("**met**: 0.35× floor (10k); **missed**: 0.20× floor (100k)");
  expect(resultOf(table, "rebuild after editing one post")).toBe("**met**: 0.50× floor (10k); **met**: 0.14× floor (100k)");
  expect(resultOf(table, "rebuild after adding one post")).toBe("**missed**: 0.70× floor (10k); **met**: 0.15× floor (100k)");
  expect(resultOf(table, "rebuild after deleting one post")).toBe("**met**: 0.55× floor (10k); **missed**: 0.16× floor (100k)");
  expect(resultOf(table, "rebuild after changing one block")).toBe("**met**: 0.59× floor (10k); **met**: 0.10× floor (100k)");
  expect(resultOf(table, "fresh checkout (posts copied anew")).toBe("**met**: 0.50× floor (10k); **missed**: 0.25× floor (100k)");
  expect(rowOf(table, "fresh checkout, one post edited").slice(-2)).toEqual(["–", "information only (no target)"]);
});

test("peak RSS is judged at 100k: 512 MiB for the full build, 256 MiB for the no-op and the edit", () => {
  const table = renderTable(run([size(100_000, { full: 2, noop: 0.5, edit: 0.5 }, { full: 500, noop: 300, edit: 200 })]));
  expect(resultOf(table, "peak RSS of the full build")).toBe("**met**: 500 MiB (100k)");
  expect(resultOf(table, "peak RSS of the no-op rebuild")).toBe("**missed**: 300 MiB (100k)");
  expect(resultOf(table, "peak RSS of the rebuild after editing one post")).toBe("**met**: 200 MiB (100k)");
  // Every other row of the 10k column is missing, and says which size it needs.
  expect(resultOf(table, "rebuild after adding one post")).toBe("not measured (needs 10k); not measured (100k)");
});

test("a run of 1k only hints with the 10k limit, and never judges RSS", () => {
  const table = renderTable(run([size(1000, { noop: 0.3, full: 2 }, { full: 100 })]));
  expect(resultOf(table, "no-op rebuild")).toBe("**met**: 0.30× floor (1k only; target is for 10k, 100k, against 10k's limit)");
  expect(resultOf(table, "full build")).toBe("**missed**: 2.00× floor (1k only; target is for 10k, 100k)");
  expect(resultOf(table, "peak RSS of the full build")).toBe("not measured (needs 100k)");
});

test("the many-organizations corpus and start-up have a table of their own", () => {
  const orgs: OrgsResult = { ...size(10_000, { full: 3, noop: 0.5, orgEdit: 0.08 }), orgs: 500, postsPerOrg: 20, blocksPerOrg: 20, editedOrg: "org-251" };
  const result = run([size(1000, { full: 2 })], { orgs, startup: { cliMs: 160, nodeMs: 100, runs: 15 } });
  const table = renderOtherTable(result)!;
  expect(resultOf(table, "500 orgs × 20 posts: `build --org org-251`")).toBe("**met**: 0.080× floor (500 orgs × 20 posts)");
  expect(rowOf(table, "500 orgs × 20 posts: `build --org org-251`").at(-2)).toBe("≤ 0.1× this corpus's floor");
  expect(resultOf(table, "500 orgs × 20 posts: no-op rebuild")).toBe("information only");
  expect(rowOf(table, "start-up")[1]).toBe("160 ms vs 100 ms · 1.60×");
  expect(resultOf(table, "start-up")).toBe("**missed**: 1.60× (medians of 15 runs each)");

  const report = renderReport(result);
  expect(report).toContain(renderTable(result));
  expect(report).toContain(table);
  expect(renderOtherTable(run([size(1000, {})]))).toBeNull();
});
