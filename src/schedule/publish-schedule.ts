/**
 * Posts on time: a build when the earliest scheduled publish instant arrives
 * (D1), so a scheduled post appears within moments of its time without a cron
 * job. `serve --schedule` and `dev` share it; each injects the build (serve
 * runs one, dev asks its rebuild queue) and learns the next instant from
 * every build that succeeds.
 *
 * The clock is injected too, and three things about time are deliberate:
 * - a timer is never set past 2^31−1 ms (Node fires one that long at once): a
 *   far instant is reached by re-arming at each clamp;
 * - a timer that fires before the instant (they may, by a millisecond or so)
 *   re-arms instead of building, since the build decides what is published by
 *   its own `now` (D1), which is the clock's reading when the build starts;
 * - a failed build is tried again after 1 s, doubling up to 5 minutes, until
 *   one succeeds: invalid sources, a full disk or another build holding the
 *   lock never stop the schedule, and never make it spin.
 */

/** Node's timers take a signed 32-bit delay; a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
export const FIRST_RETRY_MS = 1_000;
export const MAX_RETRY_MS = 5 * 60_000;

export interface ScheduleClock {
  now(): number;
  setTimer(fire: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
}

/** The wall clock, with timers that never keep a process alive on their own. */
export const systemClock: ScheduleClock = {
  now: () => Date.now(),
  setTimer: (fire, ms) => setTimeout(fire, ms).unref(),
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

export interface DueBuild {
  /** The publish instant the build is for (or, retrying, the one it was for). */
  due: Date;
  /** The clock's reading as the build starts, at or after `due`: the build's `now`. */
  now: Date;
}

export interface PublishScheduleOptions {
  /** Builds; resolves with the next scheduled instant its report gives (null: none), rejects when it fails. */
  build(due: DueBuild): Promise<string | null>;
  /** Told of a failed build, and in how long the next try is (null once the schedule is closed: none). */
  onFailure(error: unknown, retryInMs: number | null): void;
  clock?: ScheduleClock;
}

export interface PublishSchedule {
  /**
   * The earliest scheduled instant, as a successful build (its report, or the
   * live tree's build state) gives it; null when nothing is scheduled. A
   * build that succeeded ends the retries of one that failed.
   */
  learn(nextPublishAt: string | null): void;
  /** The instant the next build is for, or null (tests and log lines). */
  readonly due: Date | null;
  /** Stops the timers, and resolves once a build in flight has ended. */
  close(): Promise<void>;
}

/** The wait before try number `failures + 1`: 1 s, 2 s, 4 s, … up to 5 minutes. */
export function retryDelay(failures: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.min(failures - 1, 30), MAX_RETRY_MS);
}

/**
 * @example
 *   const schedule = createPublishSchedule({
 *     build: async ({ now }) => (await build({ db, content, out, now })).nextPublishAt,
 *     onFailure: (error, retryInMs) => log({ level: "error", msg: "scheduled build failed", retryInMs }),
 *   });
 *   schedule.learn(report.nextPublishAt); // e.g. "2026-07-01T08:00:00.000Z": builds then
 */
export function createPublishSchedule(options: PublishScheduleOptions): PublishSchedule {
  const clock = options.clock ?? systemClock;
  let due: number | null = null;
  let failures = 0;
  let retryAt = 0;
  let timer: unknown = null;
  let running: Promise<void> | null = null;
  let closed = false;

  function disarm(): void {
    if (timer !== null) clock.clearTimer(timer);
    timer = null;
  }

  function arm(): void {
    disarm();
    if (closed || running || due === null) return;
    const at = failures > 0 ? Math.max(due, retryAt) : due;
    timer = clock.setTimer(() => fire(at), Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS));
  }

  function fire(at: number): void {
    timer = null;
    const now = clock.now();
    if (now < at) return arm();
    run(due!, now);
  }

  function run(instant: number, now: number): void {
    // A build that throws at once, or reports what is not an instant, fails like one that rejects.
    const outcome = Promise.resolve()
      .then(() => options.build({ due: new Date(instant), now: new Date(now) }))
      .then(instantOf)
      .then(
        (next) => {
          failures = 0;
          due = next;
        },
        (error: unknown) => {
          failures++;
          const wait = retryDelay(failures);
          retryAt = clock.now() + wait;
          options.onFailure(error, closed ? null : wait);
        },
      );
    running = outcome.finally(() => {
      running = null;
      arm();
    });
  }

  return {
    learn(nextPublishAt) {
      due = instantOf(nextPublishAt);
      failures = 0;
      arm();
    },
    get due() {
      return due === null ? null : new Date(due);
    },
    async close() {
      closed = true;
      disarm();
      await running;
    },
  };
}

function instantOf(iso: string | null): number | null {
  if (iso === null) return null;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not an instant: ${iso}`);
  return ms;
}
