/**
 * `cdsnap serve --schedule`: the server builds when a scheduled post falls
 * due. It learns when from the live generation's build state at start, from
 * each of its own builds' reports, and from the state again whenever another
 * process's build (CI's `cdsnap build`) publishes: posts arrive by such
 * builds, since nothing here watches the content folder. A PATCH never
 * changes what is scheduled. Each scheduled build is one log line, its
 * changes go to the on-change hook like any build's, and a failed one is one
 * error line and a retry (publish-schedule.ts).
 */
import { existsSync } from "node:fs";
import { build as runBuild, type BuildOptions } from "../build.js";
import { readNextPublishAt } from "../emit/build-state.js";
import { liveGenerationSync, previewOutOf, treeStoreOf } from "../emit/tree-store.js";
import { AuditFailedError, errorSummary, InvalidSourcesError } from "../errors.js";
import { buildChange, type Change } from "../on-change/change-set.js";
import type { BuildReport } from "../report.js";
import type { Logger } from "../server/respond.js";
import { createPublishSchedule, systemClock, type DueBuild, type ScheduleClock } from "./publish-schedule.js";
import { watchBuildState } from "./watch-build-state.js";

export interface ServeScheduleOptions {
  db: string;
  content: string;
  out: string;
  log: Logger;
  onChange?: (change: Change) => void;
  clock?: ScheduleClock;
  /** How often `--out` and its build state are looked at for another process's build, in ms. */
  watchMs?: number;
  /** The build to run; tests wrap the real one to hold it in flight. */
  build?: (options: BuildOptions) => Promise<BuildReport>;
}

export interface ServeSchedule {
  /** Stops watching and scheduling, and resolves once a build in flight has ended. */
  close(): Promise<void>;
}

export const DEFAULT_WATCH_MS = 1_000;
/** The problems a failure's log line quotes; `cdsnap check` lists them all. */
const PROBLEMS_LOGGED = 5;

export function startServeSchedule(options: ServeScheduleOptions): ServeSchedule {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const store = treeStoreOf(options.out);
  const build = options.build ?? runBuild;

  async function buildDue({ due, now }: DueBuild): Promise<string | null> {
    // A post fallen due changes its status in the preview tree too: one made by `build --preview` is kept current.
    const preview = existsSync(previewOutOf(options.out));
    const report = await build({ db: options.db, content: options.content, out: options.out, now, preview });
    options.onChange?.(buildChange(report.changedPaths, report.changedTags));
    log(scheduledBuildLine(due, report));
    return report.nextPublishAt;
  }

  const schedule = createPublishSchedule({
    build: buildDue,
    clock,
    onFailure(error, retryInMs) {
      const { code, message } = errorSummary(error);
      log({ level: "error", msg: "scheduled build failed", code, error: message, ...problemsOf(error), retryInMs });
    },
  });

  /** What the state says now, learned; false when it cannot tell yet. */
  function learnFromState(): boolean {
    const known = readNextPublishAt(store, liveGenerationSync(store));
    if (known === null) return false;
    const before = schedule.due?.toISOString() ?? null;
    schedule.learn(known.nextPublishAt);
    if (known.nextPublishAt !== before) log({ msg: "publish schedule", nextPublishAt: known.nextPublishAt, learnedFrom: "a build's state" });
    return true;
  }

  const watch = watchBuildState(store, options.watchMs ?? DEFAULT_WATCH_MS, learnFromState, (error) => {
    const { code, message } = errorSummary(error);
    log({ level: "error", msg: "build state not read", code, error: message });
  });
  let known;
  try {
    known = readNextPublishAt(store, liveGenerationSync(store));
  } catch (error) {
    // A state that cannot be read at all stops serve at start, naming the file (state_unreadable).
    watch.stop();
    throw error;
  }
  if (known) {
    schedule.learn(known.nextPublishAt);
    log({ msg: "publish schedule", nextPublishAt: known.nextPublishAt });
  } else {
    // An upgrade changes the state's format, and a tree can be built without one: a build now tells.
    log({ msg: "publish schedule", nextPublishAt: null, buildingNow: "the build state beside the tree does not say when a post is next due" });
    schedule.learn(new Date(clock.now()).toISOString());
  }

  return {
    async close() {
      watch.stop();
      await schedule.close();
    },
  };
}

/** One line per scheduled build: what fell due, what changed, how long it took. */
function scheduledBuildLine(due: Date, report: BuildReport): Record<string, unknown> {
  const change = buildChange(report.changedPaths, report.changedTags);
  const sum = (key: "filesWritten" | "filesRemoved") => report.orgs.reduce((n, o) => n + o[key], 0);
  return {
    msg: "scheduled build",
    due: due.toISOString(),
    changed: report.changed,
    orgs: change.orgs,
    filesWritten: sum("filesWritten"),
    filesRemoved: sum("filesRemoved"),
    ms: report.durationMs,
    generation: report.generation,
    nextPublishAt: report.nextPublishAt,
  };
}

function problemsOf(error: unknown): { problems?: string[] } {
  if (!(error instanceof InvalidSourcesError || error instanceof AuditFailedError)) return {};
  return { problems: error.problems.slice(0, PROBLEMS_LOGGED).map((p) => `${p.where}: ${p.message}`) };
}
