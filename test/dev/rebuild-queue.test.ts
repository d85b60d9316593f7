/** The scheduling under `cdsnap dev`: one build at a time, changes coalesced. */
import { describe, expect, test } from "vitest";
import { createRebuildQueue, type RebuildScope } from "../../src/dev/rebuild-queue.js";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
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
    const runs: RebuildScope[] = [];
    const gates = [deferred(), deferred()];
    let active = 0;
    let maxActive = 0;
    const queue = createRebuildQueue(async (scope) => {
      active++;
      maxActive = Math.max(maxActive, active);
      runs.push(scope);
      await gates[runs.length - 1]?.promise;
      active--;
    }, 5);
    queue.touch("a");
    await new Promise((r) => setTimeout(r, 30)); // the first build is running
    expect(runs).toHaveLength(1);
    queue.touch("b");
    queue.touch("c");
    queue.touch("b");
    gates[0]!.resolve();
    await new Promise((r) => setTimeout(r, 10));
    gates[1]!.resolve();
    await queue.idle();
    expect(runs).toEqual([{ orgs: ["a"] }, { orgs: ["b", "c"] }]);
    expect(maxActive).toBe(1);
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
    const gate = deferred();
    let calls = 0;
    let finished = false;
    const queue = createRebuildQueue(async () => {
      calls++;
      await gate.promise;
      finished = true;
    }, 1);
    queue.touch("a");
    await new Promise((r) => setTimeout(r, 20));
    const closing = queue.close();
    queue.touch("b");
    gate.resolve();
    await closing;
    expect(finished).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
  });
});
