/**
 * The scheduling under `cdsnap dev`: one build at a time, changes coalesced,
 * and a quiet period before every build. Each test waits for the builds it
 * causes (a gate per build), never for a length of time.
 */
import { describe, expect, test } from "vitest";
import { createRebuildQueue, type RebuildScope } from "../../src/dev/rebuild-queue.js";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A runner whose builds each wait for their own gate, announcing when they start. */
function gatedRunner() {
  const runs: { scope: RebuildScope; at: number }[] = [];
  const gates: ReturnType<typeof deferred>[] = [];
  const starts: ReturnType<typeof deferred>[] = [];
  const slot = (list: ReturnType<typeof deferred>[], n: number) => (list[n] ??= deferred());
  let active = 0;
  let maxActive = 0;
  const run = async (scope: RebuildScope) => {
    active++;
    maxActive = Math.max(maxActive, active);
    const n = runs.push({ scope, at: performance.now() }) - 1;
    slot(starts, n).resolve();
    await slot(gates, n).promise;
    active--;
  };
  return {
    run,
    runs,
    maxActive: () => maxActive,
    /** Resolves when build n (from 0) has started. */
    started: (n: number) => slot(starts, n).promise,
    finish: (n: number) => slot(gates, n).resolve(),
  };
}

describe("rebuild queue", () => {
  test("a burst of changes becomes one build of the organizations touched", async () => {
    const runs: RebuildScope[] = [];
    const queue = createRebuildQueue(async (scope) => void runs.push(scope), 20);
    queue.touch("b");
    queue.touch("a");
    queue.touch("b");
    await queue.idle();
    expect(runs).toEqual([{ orgs: ["a", "b"] }]);
    await queue.close();
  });

  test("a database change (undefined) means everything", async () => {
    const runs: RebuildScope[] = [];
    const queue = createRebuildQueue(async (scope) => void runs.push(scope), 10);
    queue.touch("a");
    queue.touch(undefined);
    await queue.idle();
    expect(runs).toEqual([{ orgs: undefined }]);
    await queue.close();
  });

  test("changes during a build run exactly one more build, never two at once", async () => {
    const runner = gatedRunner();
    const queue = createRebuildQueue(runner.run, 5);
    queue.touch("a");
    await runner.started(0);
    queue.touch("b");
    queue.touch("c");
    queue.touch("b");
    runner.finish(0);
    await runner.started(1);
    runner.finish(1);
    await queue.idle();
    expect(runner.runs.map((r) => r.scope)).toEqual([{ orgs: ["a"] }, { orgs: ["b", "c"] }]);
    expect(runner.maxActive()).toBe(1);
    await queue.close();
  });

  test("a change during a build is built only after the quiet period, so a save still being written is read whole", async () => {
    const runner = gatedRunner();
    const debounceMs = 80;
    const queue = createRebuildQueue(runner.run, debounceMs);
    queue.touch("a");
    await runner.started(0);
    const touchedAt = performance.now();
    queue.touch("a");
    runner.finish(0);
    await runner.started(1);
    runner.finish(1);
    await queue.idle();
    // The whole quiet period, on a loaded machine too (a timer alone may fire a few ms early).
    expect(runner.runs[1]!.at - touchedAt).toBeGreaterThanOrEqual(debounceMs);
    await queue.close();
  });

  test("changes during the first build (runFirst) wait for it, then build once", async () => {
    const runner = gatedRunner();
    const queue = createRebuildQueue(runner.run, 5);
    const first = deferred();
    const firstBuild = queue.runFirst(() => first.promise.then(() => "built"));
    queue.touch("a");
    queue.touch(undefined);
    expect(runner.runs).toHaveLength(0);
    first.resolve();
    expect(await firstBuild).toBe("built");
    await runner.started(0);
    runner.finish(0);
    await queue.idle();
    expect(runner.runs.map((r) => r.scope)).toEqual([{ orgs: undefined }]);
    await queue.close();
  });

  test("a failing build does not stop the loop", async () => {
    let calls = 0;
    const queue = createRebuildQueue(async () => {
      calls++;
      if (calls === 1) throw new Error("boom");
    }, 5);
    queue.touch("a");
    await queue.idle();
    queue.touch("a");
    await queue.idle();
    expect(calls).toBe(2);
    await queue.close();
  });

  test("close waits for the running build and ignores later changes", async () => {
    const runner = gatedRunner();
    const queue = createRebuildQueue(runner.run, 1);
    queue.touch("a");
    await runner.started(0);
    const closing = queue.close();
    queue.touch("b");
    runner.finish(0);
    await closing;
    await queue.idle();
    expect(runner.runs).toHaveLength(1);
  });
});
