/**
 * `cdsnap dev`: `serve`, plus a watcher that rebuilds on every change of the
 * content folder or the database. A build that fails prints its problems and
 * changes nothing (build() leaves `--out` as it was), so the last good tree
 * keeps being served; the next good save recovers it, no restart needed.
 * When there is no tree at all (the first build failed, and none was built
 * before), nothing listens until a build succeeds: a server without a tree
 * would answer 404 to everything, which looks like a bug in the site rather
 * than in its sources.
 *
 * A scheduled post is published on time without a save: when the earliest
 * instant a build reported arrives, the schedule (schedule/publish-schedule.ts)
 * asks the queue for a build of everything, so builds never overlap.
 */
import { watch, type FSWatcher } from "chokidar";
import { createServer as createNetServer } from "node:net";
import path from "node:path";
import { build } from "../build.js";
import { openContractDatabase } from "../db/contract-schema.js";
import { openDatabase } from "../db/open.js";
import { watchCommits } from "../db/watch-commits.js";
import { CdsnapError, type Problem } from "../errors.js";
import { plural, type BuildReport } from "../report.js";
import type { Logger } from "../server/respond.js";
import { buildChange, type Change } from "../on-change/change-set.js";
import { startServer, type RunningServer } from "../server/create-server.js";
import { missingTree } from "../server/published-tree.js";
import { createPublishSchedule, type ScheduleClock } from "../schedule/publish-schedule.js";
import { createRebuildQueue, type RebuildScope } from "./rebuild-queue.js";
import { fingerprintSources } from "./source-fingerprint.js";

export interface DevOptions {
  db: string;
  content: string;
  out: string;
  host?: string;
  port?: number;
  /** Quiet period after the last change before a build starts (ms). */
  debounceMs?: number;
  /** Where progress goes; defaults to stdout (info) and stderr (errors). */
  print?: (line: string, kind: "info" | "error") => void;
  /** Told of each build's changes, and of the server's (see ServeOptions.onChange). */
  onChange?: (change: Change) => void;
  /** The clock the publish schedule reads and sets its timers by (tests). */
  clock?: ScheduleClock;
  /**
   * Build the preview tree too on every rebuild (`build --preview`): keys with
   * the preview scope then read drafts and scheduled posts as they are saved.
   */
  preview?: boolean;
}

export interface RunningDev {
  /**
   * The server's URL once it listens: right after the first build, or, when
   * there was no tree to serve, after the first build that succeeds. Rejects
   * when it cannot listen then (the port was taken meanwhile).
   */
  listening: Promise<string>;
  /** Resolves when no build is running or waiting (tests use it; a person never needs it). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_DEBOUNCE_MS = 100;
/** How often the database is looked at for another connection's commit: a pragma read, microseconds. */
const DB_POLL_MS = 100;

function defaultPrint(line: string, kind: "info" | "error"): void {
  (kind === "error" ? process.stderr : process.stdout).write(`${line}\n`);
}

function problemsOf(error: unknown): readonly Problem[] | undefined {
  const problems = (error as { problems?: unknown }).problems;
  return Array.isArray(problems) ? (problems as Problem[]) : undefined;
}

/** The line of a build; `due`, the publish instant it was run for when the schedule asked for it. */
function describeSuccess(report: BuildReport, scope: RebuildScope, due: Date | undefined): string {
  const what = `${scope.orgs ? scope.orgs.join(", ") : "all organizations"}${due ? ` for the posts due at ${due.toISOString()}` : ""}`;
  const next = report.nextPublishAt ? `; next scheduled publish ${report.nextPublishAt}` : "";
  const { preview } = report;
  const previewPart = preview ? `; preview ${preview.changed ? `generation ${preview.generation}` : "unchanged"}` : "";
  const durationMs = report.durationMs + (preview?.durationMs ?? 0);
  if (!report.changed) return `rebuilt ${what} in ${durationMs} ms: no output changed${previewPart}${next}`;
  const sum = (key: "filesWritten" | "filesRemoved") => report.orgs.reduce((n, o) => n + o[key], 0);
  return (
    `rebuilt ${what} in ${durationMs} ms: ${plural(sum("filesWritten"), "file")} written, ${sum("filesRemoved")} removed; ` +
    `serving generation ${report.generation}${previewPart}${next}`
  );
}

/** A wait as a person reads it: "2 s", "5 min". */
function formatWait(ms: number): string {
  return ms < 60_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;
}

/**
 * Fails the way listening on `host:port` would, without staying there: with
 * nothing to serve yet, a busy port is reported at once rather than after the
 * sources are fixed.
 */
async function probePort(host: string, port: number): Promise<void> {
  const probe = createNetServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** Only 4xx and 5xx answers are worth a line while authoring; the rest would drown the build messages. */
function createDevLogger(print: NonNullable<DevOptions["print"]>): Logger {
  return (line) => {
    if (line.level === "error") print(`server error: ${String(line.error ?? line.msg)}`, "error");
    else if (typeof line.status === "number" && line.status >= 400) print(`${line.method} ${line.path} -> ${line.status}`, "info");
  };
}

/**
 * Builds once, serves, and rebuilds on change until `close()`.
 *
 * @example
 *   const dev = await startDev({ db: "cdsnap.db", content: "content", out: "site", port: 0 });
 *   console.log(await dev.listening); // http://127.0.0.1:54321
 *   await dev.close();
 */
export async function startDev(options: DevOptions): Promise<RunningDev> {
  const print = options.print ?? defaultPrint;
  const content = path.resolve(options.content);
  const db = path.resolve(options.db);
  const out = path.resolve(options.out);
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? 8787;
  /** Organizations the last full build rendered: a change in one of their folders rebuilds that one alone (D14). */
  let known = new Set<string>();
  let lastFailed = false;
  /** Set when listening starts, so that a build finishing meanwhile does not listen a second time. */
  let server: Promise<RunningServer> | null = null;
  let listenFailed = false;
  let listened!: (url: string) => void;
  let refused!: (error: unknown) => void;
  const listening = new Promise<string>((resolve, reject) => {
    listened = resolve;
    refused = reject;
  });

  async function serve(): Promise<void> {
    server = startServer({ db, out, host, port, log: createDevLogger(print), onChange: options.onChange });
    listened((await server).url);
  }

  const queue = createRebuildQueue(rebuildAndServe, options.debounceMs ?? DEFAULT_DEBOUNCE_MS);

  /**
   * Builds the schedule asked for: each waits for the next build of
   * everything the queue starts, so scheduled builds never overlap the others.
   */
  const dueBuilds: { due: Date; resolve: (next: string | null) => void; reject: (error: unknown) => void }[] = [];
  const schedule = createPublishSchedule({
    clock: options.clock,
    build: ({ due }) =>
      new Promise<string | null>((resolve, reject) => {
        dueBuilds.push({ due, resolve, reject });
        queue.touch(undefined);
      }),
    // The build's own failure is printed already, with its problems.
    onFailure(_error, retryInMs) {
      if (retryInMs !== null) print(`scheduled posts not published yet: trying again in ${formatWait(retryInMs)}, or save to rebuild`, "error");
    },
  });

  /**
   * Builds; true when the build succeeded. Whether it succeeded or not, a post
   * that changed while the build read the folder is built again.
   */
  async function rebuild(scope: RebuildScope, initial = false): Promise<boolean> {
    // After a failure, build everything: the list of problems stays complete, and so does the recovery.
    const full = scope.orgs === undefined || lastFailed || scope.orgs.some((id) => !known.has(id));
    const effective: RebuildScope = full ? { orgs: undefined } : scope;
    const before = await fingerprintSources(content, effective.orgs);
    // Asked for before this build started: it publishes what fell due by then.
    const answering = full ? dueBuilds.splice(0) : [];
    try {
      const report = await build({ db, content, out, orgs: effective.orgs, preview: options.preview });
      options.onChange?.(buildChange(report.changedPaths, report.changedTags));
      if (full) known = new Set(report.orgs.map((o) => o.orgId));
      lastFailed = false;
      print(describeSuccess(report, effective, answering[0]?.due), "info");
      for (const warning of report.warnings) print(`warning: ${warning.where}: ${warning.message}`, "error");
      schedule.learn(report.nextPublishAt);
      for (const waiting of answering) waiting.resolve(report.nextPublishAt);
      return true;
    } catch (error) {
      lastFailed = true;
      for (const waiting of answering) waiting.reject(error);
      const problems = problemsOf(error);
      // Usage problems at start (no database, no content folder) stop `dev` like they stop `build`.
      if (initial && !problems) throw error;
      const message = error instanceof CdsnapError ? error.message : `unexpected error: ${(error as Error)?.message ?? String(error)}`;
      const lines = (problems ?? []).map((p) => `  ${p.where}: ${p.message}`);
      const served = server !== null || missingTree(out) === null;
      const next = served
        ? "still serving the last good tree; fix the sources and save to rebuild"
        : `nothing is served yet: there is no tree to serve until a build succeeds; fix the sources and save, ` +
          `and cdsnap dev starts listening on ${port === 0 ? `a free port of ${host}` : `${host}:${port}`}`;
      print([`build failed: ${message}`, ...lines, next].join("\n"), "error");
      return false;
    } finally {
      if ((await fingerprintSources(content, effective.orgs)) !== before) {
        for (const orgId of effective.orgs ?? [undefined]) queue.touch(orgId);
      }
    }
  }

  /** A rebuild from the watch; the first that succeeds while nothing is served starts the server. */
  async function rebuildAndServe(scope: RebuildScope): Promise<void> {
    if (!(await rebuild(scope)) || server || listenFailed) return;
    try {
      await serve();
    } catch (error) {
      listenFailed = true;
      refused(error);
    }
  }

  // The watch starts before the first build, so that a save during that build is built after it.
  const watcher: FSWatcher = watch(content, {
    ignoreInitial: true,
    ignored: (file) => path.basename(file) === "node_modules",
  });
  watcher.on("all", (event: string, file: string) => {
    const rel = path.relative(content, path.resolve(file));
    if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return;
    const parts = rel.split(path.sep);
    // Editors' swap and backup files are not posts; the build reads `**/*.md` only, without dot files.
    if (parts.some((p) => p.startsWith("."))) return;
    const isPost = file.endsWith(".md") || event === "addDir" || event === "unlinkDir";
    if (!isPost) return;
    // A post at the top level belongs to no organization: only a full build reports it.
    queue.touch(parts.length > 1 ? parts[0] : undefined);
  });
  watcher.on("error", (error) => print(`watch error: ${(error as Error).message}`, "error"));
  await new Promise<void>((resolve) => watcher.once("ready", () => resolve()));

  // The server switches the file to WAL when it starts; done first, that switch
  // is not taken for an admin's change.
  openContractDatabase(db, { wal: true }).close();
  const versionDb = openDatabase(db, { readonly: true });
  const commits = watchCommits(
    versionDb,
    DB_POLL_MS,
    () => queue.touch(undefined),
    (error) => print(`database watch error: ${(error as Error).message}`, "error"),
  );

  async function stopWatching(): Promise<void> {
    commits.stop();
    await watcher.close();
  }

  try {
    const built = await queue.runFirst(() => rebuild({ orgs: undefined }, true));
    // A tree an earlier build left is served while the sources are being fixed.
    if (built || missingTree(out) === null) await serve();
    else if (port !== 0) await probePort(host, port);
  } catch (error) {
    await stopScheduling();
    versionDb.close();
    throw error;
  }

  /** Stops the watches, the queue and the schedule, once the build in flight has ended. */
  async function stopScheduling(): Promise<void> {
    const scheduleClosed = schedule.close();
    await stopWatching();
    await queue.close();
    // The queue closed before their build started: dev is stopping, nothing is published or tried again.
    for (const waiting of dueBuilds.splice(0)) waiting.resolve(null);
    await scheduleClosed;
  }

  return {
    listening,
    idle: () => queue.idle(),
    async close() {
      await stopScheduling();
      // Read after the queue is closed: its last build may have started the server. One that failed to start was reported then.
      const running = await (server as Promise<RunningServer> | null)?.catch(() => null);
      await running?.close();
      versionDb.close();
    },
  };
}
