/**
 * The group-commit queue on its own: what is submitted in one turn of the event
 * loop runs as one batch, in submission order, and every submitter hears its
 * own outcome.
 */
import { describe, expect, it } from "vitest";
import { createGroupCommit, type Outcome } from "../../src/server/group-commit.js";

/** A queue whose batches are recorded; odd numbers fail, even ones succeed with their double. */
function recordingQueue() {
  const batches: number[][] = [];
  const queue = createGroupCommit((items: readonly number[]): Outcome<number>[] => {
    batches.push([...items]);
    return items.map((n) => (n % 2 === 0 ? { ok: true, value: n * 2 } : { ok: false, error: new Error(`odd ${n}`) }));
  });
  return { queue, batches };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("group commit", () => {
  it("items submitted in one turn run as one batch, in order, each settling with its own outcome", async () => {
    const { queue, batches } = recordingQueue();
    const settled = await Promise.allSettled([0, 1, 2, 3, 4].map((n) => queue.submit(n)));
    expect(batches).toEqual([[0, 1, 2, 3, 4]]);
    expect(settled).toEqual([
      { status: "fulfilled", value: 0 },
      { status: "rejected", reason: new Error("odd 1") },
      { status: "fulfilled", value: 4 },
      { status: "rejected", reason: new Error("odd 3") },
      { status: "fulfilled", value: 8 },
    ]);
  });

  it("items submitted in a later turn form a batch of their own", async () => {
    const { queue, batches } = recordingQueue();
    const first = [queue.submit(2), queue.submit(4)];
    await nextTurn();
    const second = [queue.submit(6)];
    expect(await Promise.all([...first, ...second])).toEqual([4, 8, 12]);
    expect(batches).toEqual([[2, 4], [6]]);
  });

  it("a batch that throws fails every item of it with that error", async () => {
    const failure = new Error("SQLITE_BUSY: database is locked");
    const queue = createGroupCommit((): Outcome<number>[] => {
      throw failure;
    });
    const settled = await Promise.allSettled([queue.submit(1), queue.submit(2)]);
    expect(settled).toEqual([
      { status: "rejected", reason: failure },
      { status: "rejected", reason: failure },
    ]);
  });

  it("flush() runs the queued items at once, and the turn's scheduled run finds nothing left", async () => {
    const { queue, batches } = recordingQueue();
    const pending = [queue.submit(2), queue.submit(4)];
    queue.flush();
    expect(batches).toEqual([[2, 4]]);
    expect(await Promise.all(pending)).toEqual([4, 8]);
    await nextTurn();
    expect(batches).toEqual([[2, 4]]);
  });
});
