/**
 * The publish schedule on its own, driven by an injected clock: each test
 * fires the armed timer itself, moving the clock to the moment it was set
 * for (or a little before), and holds builds open with gates. Nothing here
 * waits for time to pass.
 */
import { describe, expect, test } from "vitest";
import {
  createPublishSchedule,
  MAX_RETRY_MS,
  MAX_TIMER_MS,
  retryDelay,
  type DueBuild,
  type ScheduleClock,
} from "../../src/schedule/publish-schedule.js";

const T0 = Date.parse("2026-07-01T08:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

/** A clock whose one armed timer the test fires by hand. */
function manualClock(start: number) {
  let now = start;
  const armed = new Map<number, { fire: () => void; ms: number; setAt: number }>();
  let ids = 0;
  const clock: ScheduleClock = {
    now: () => now,
    setTimer(fire, ms) {
      armed.set(++ids, { fire, ms, setAt: now });
      return ids;
    },
    clearTimer: (id) => void armed.delete(id as number),
  };
  return {
    clock,
    /** The delay of the armed timer, or null; more than one armed would be a bug. */
    armedMs(): number | null {
      expect(armed.size).toBeLessThanOrEqual(1);
      const [timer] = armed.values();
      return timer?.ms ?? null;
    },
    /** Fires the armed timer, the clock moved to its moment less `early` ms. */
    fire(early = 0): void {
      const [entry] = armed;
      if (!entry) throw new Error("no timer is armed");
      const [id, timer] = entry;
      armed.delete(id);
      now = timer.setAt + timer.ms - early;
      timer.fire();
    },
    set(ms: number): void {
      now = ms;
    },
  };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A build per call, each settled by the test; `started(n)` resolves once build n (from 0) has been asked for. */
function gatedBuilds() {
  const calls: DueBuild[] = [];
  const outcomes: ReturnType<typeof deferred<string | null>>[] = [];
  const starts: ReturnType<typeof deferred<void>>[] = [];
  const slot = <T>(list: ReturnType<typeof deferred<T>>[], n: number) => (list[n] ??= deferred<T>());
  return {
    calls,
    build: (due: DueBuild) => {
      const n = calls.push(due) - 1;
      slot(starts, n).resolve();
      return slot(outcomes, n).promise;
    },
    started: (n: number) => slot(starts, n).promise,
    succeed: (n: number, next: string | null) => slot(outcomes, n).resolve(next),
    fail: (n: number, error: unknown) => slot(outcomes, n).reject(error),
    /** Settled after the schedule's own handlers of build n ran. */
    settled: async (n: number) => {
      await slot(outcomes, n).promise.catch(() => undefined);
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
}

function scheduleWith(start = T0 - 3_000) {
  const time = manualClock(start);
  const builds = gatedBuilds();
  const failures: { error: unknown; retryInMs: number | null }[] = [];
  const schedule = createPublishSchedule({
    clock: time.clock,
    build: builds.build,
    onFailure: (error, retryInMs) => failures.push({ error, retryInMs }),
  });
  return { time, builds, failures, schedule };
}

describe("the publish schedule", () => {
  test("builds when the instant comes, with that instant as the build's now", async () => {
    const { time, builds, schedule } = scheduleWith(T0 - 3_000);
    schedule.learn(iso(T0));
    expect(time.armedMs()).toBe(3_000);
    time.fire();
    await builds.started(0);
    expect(builds.calls).toEqual([{ due: new Date(T0), now: new Date(T0) }]);
    builds.succeed(0, iso(T0 + 60_000));
    await builds.settled(0);
    expect(schedule.due).toEqual(new Date(T0 + 60_000));
    expect(time.armedMs()).toBe(60_000);
    await schedule.close();
  });

  test("a timer that fires early arms again for what is left, and builds only at the instant", async () => {
    const { time, builds, schedule } = scheduleWith();
    schedule.learn(iso(T0));
    time.fire(2);
    expect(builds.calls).toEqual([]);
    expect(time.armedMs()).toBe(2);
    time.fire();
    await builds.started(0);
    expect(builds.calls[0]!.now.getTime()).toBe(T0);
    builds.succeed(0, null);
    await schedule.close();
  });

  test("a far instant never sets a timer past 2^31-1 ms: it is reached one clamp at a time", async () => {
    const far = T0 + 100 * 86_400_000;
    const { time, builds, schedule } = scheduleWith(T0);
    schedule.learn(iso(far));
    const delays: number[] = [];
    // Once the instant is reached the build runs, and nothing is armed while it does.
    for (let ms = time.armedMs(); ms !== null; ms = time.armedMs()) {
      delays.push(ms);
      time.fire();
    }
    await builds.started(0);
    expect(delays.slice(0, 4)).toEqual([MAX_TIMER_MS, MAX_TIMER_MS, MAX_TIMER_MS, MAX_TIMER_MS]);
    expect(delays).toHaveLength(5);
    expect(delays.reduce((a, b) => a + b)).toBe(far - T0);
    expect(builds.calls).toEqual([{ due: new Date(far), now: new Date(far) }]);
    builds.succeed(0, null);
    await schedule.close();
  });

  test("nothing scheduled, nothing armed; an instant already past builds at once", async () => {
    const { time, builds, schedule } = scheduleWith(T0);
    schedule.learn(null);
    expect(time.armedMs()).toBeNull();
    schedule.learn(iso(T0 - 5_000));
    expect(time.armedMs()).toBe(0);
    time.fire();
    await builds.started(0);
    expect(builds.calls).toEqual([{ due: new Date(T0 - 5_000), now: new Date(T0) }]);
    builds.succeed(0, null);
    await builds.settled(0);
    expect(time.armedMs()).toBeNull();
    await schedule.close();
  });

  test("a failed build is tried again after 1 s, doubling up to 5 minutes, until one succeeds; then the schedule goes on", async () => {
    const { time, builds, failures, schedule } = scheduleWith(T0);
    schedule.learn(iso(T0));
    const waits: number[] = [];
    for (let n = 0; n < 12; n++) {
      time.fire();
      await builds.started(n);
      builds.fail(n, new Error(`disk trouble ${n}`));
      await builds.settled(n);
      waits.push(time.armedMs()!);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000, 300_000]);
    expect(failures.map((f) => f.retryInMs)).toEqual(waits);
    expect(failures.map((f) => (f.error as Error).message)).toEqual(waits.map((_, n) => `disk trouble ${n}`));
    // Every try is for the same instant: what fell due is still unpublished.
    expect(new Set(builds.calls.map((c) => c.due.getTime()))).toEqual(new Set([T0]));

    time.fire();
    await builds.started(12);
    const later = builds.calls[12]!.now.getTime() + 3_600_000;
    builds.succeed(12, iso(later));
    await builds.settled(12);
    expect(time.armedMs()).toBe(3_600_000);

    // A success resets the backoff: the next failure waits 1 s again.
    time.fire();
    await builds.started(13);
    builds.fail(13, new Error("lock held"));
    await builds.settled(13);
    expect(time.armedMs()).toBe(1_000);
    await schedule.close();
  });

  test("what another build reports ends the retries", async () => {
    const { time, builds, schedule } = scheduleWith(T0);
    schedule.learn(iso(T0));
    time.fire();
    await builds.started(0);
    builds.fail(0, new Error("invalid sources"));
    await builds.settled(0);
    expect(time.armedMs()).toBe(1_000);
    // CI fixed the sources and built: the post is out, the next one is tomorrow.
    schedule.learn(iso(T0 + 86_400_000));
    expect(time.armedMs()).toBe(86_400_000);
    schedule.learn(null);
    expect(time.armedMs()).toBeNull();
    await schedule.close();
  });

  test("an instant learned while a build runs starts no second build; the running one's report decides", async () => {
    const { time, builds, schedule } = scheduleWith(T0);
    schedule.learn(iso(T0));
    time.fire();
    await builds.started(0);
    schedule.learn(iso(T0 - 1));
    expect(time.armedMs()).toBeNull();
    builds.succeed(0, iso(T0 + 10_000));
    await builds.settled(0);
    expect(builds.calls).toHaveLength(1);
    expect(time.armedMs()).toBe(10_000);
    await schedule.close();
  });

  test("close() waits for the build in flight, arms nothing after it, and reports its failure without a retry", async () => {
    const { time, builds, failures, schedule } = scheduleWith(T0);
    schedule.learn(iso(T0));
    time.fire();
    await builds.started(0);
    let closed = false;
    const closing = schedule.close().then(() => (closed = true));
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    builds.fail(0, new Error("the disk is full"));
    await closing;
    expect(failures).toEqual([{ error: new Error("the disk is full"), retryInMs: null }]);
    expect(time.armedMs()).toBeNull();
    schedule.learn(iso(T0 + 1_000));
    expect(time.armedMs()).toBeNull();
    expect(builds.calls).toHaveLength(1);
  });

  test("a build that throws at once, or reports no instant, fails like any other: logged and tried again", async () => {
    const time = manualClock(T0);
    const failures: unknown[] = [];
    const outcomes: (() => Promise<string | null>)[] = [
      () => Promise.resolve("not a date"),
      () => {
        throw new Error("thrown at once");
      },
    ];
    const schedule = createPublishSchedule({ clock: time.clock, build: () => outcomes.shift()!(), onFailure: (error) => failures.push(error) });
    schedule.learn(iso(T0));
    for (const wait of [1_000, 2_000]) {
      time.fire();
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(time.armedMs()).toBe(wait);
    }
    expect(failures.map((error) => (error as Error).message)).toEqual(["not an instant: not a date", "thrown at once"]);
    await schedule.close();
  });

  test("retry delays: 1 s doubling, capped at 5 minutes however many failures", () => {
    expect([1, 2, 3, 9, 10, 11, 1_000].map(retryDelay)).toEqual([1_000, 2_000, 4_000, 256_000, MAX_RETRY_MS, MAX_RETRY_MS, MAX_RETRY_MS]);
  });
});
