import { describe, expect, it } from "vitest";
import { mapLimit } from "../src/concurrency.js";

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("mapLimit", () => {
  it("keeps at most `limit` calls in flight and returns results in input order", async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapLimit([5, 1, 4, 2, 3, 0], 3, async (ms, i) => {
      most = Math.max(most, ++inFlight);
      await tick(ms);
      inFlight--;
      return i * 10;
    });
    expect(results).toEqual([0, 10, 20, 30, 40, 50]);
    expect(most).toBe(3);
  });

  it("on a failure starts no new call and throws only once the calls in flight have settled", async () => {
    const started: number[] = [];
    const settled: number[] = [];
    const failing = mapLimit([0, 1, 2, 3, 4, 5, 6, 7], 3, async (i) => {
      started.push(i);
      await tick(i === 0 ? 1 : 30);
      settled.push(i);
      if (i === 0) throw new Error("first call failed");
      return i;
    });
    await expect(failing).rejects.toThrow("first call failed");
    expect(started).toEqual([0, 1, 2]);
    expect(settled.sort()).toEqual([0, 1, 2]);
  });
});
