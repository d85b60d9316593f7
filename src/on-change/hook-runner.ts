/**
 * Runs the `--on-change` command (through `/bin/sh -c`) with one JSON object
 * on its stdin (model/change-event.ts) for each change, off the path of the
 * change itself: `notify` only records the change and returns, so a PATCH is
 * answered and a build ends whatever the command does.
 *
 * One run at a time. Changes that come while a run is going are merged, one
 * pending run per kind of event (their paths, tags and organizations united),
 * so a burst of PATCHes behind a slow command costs one more run, not one per
 * PATCH. A run that outlives the timeout gets SIGTERM, and SIGKILL
 * `killGraceMs` later, sent to its whole process group (the shell and what it
 * started). When the shell exits, whatever it left running in the background
 * is killed too: a run is over when its command is.
 */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import type { ChangeEvent, ChangeKind } from "../model/change-event.js";
import type { Change } from "./change-set.js";

export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
const DEFAULT_KILL_GRACE_MS = 2_000;
/** The end of a hook's stderr that the report of its run carries. */
const STDERR_TAIL_CHARS = 2_048;

export interface HookRun {
  event: ChangeKind;
  merged: number;
  paths: number;
  tags: number;
  /** ok: exited with 0; failed: exited otherwise, or could not start; timeout: killed at the timeout. */
  status: "ok" | "failed" | "timeout";
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  /** The end of what the command wrote on stderr. */
  stderr: string;
  /** Why the command could not be started. */
  error?: string;
}

export interface ChangeHookOptions {
  /** A shell command line. */
  command: string;
  timeoutMs?: number;
  killGraceMs?: number;
  /** Told of every run once it has ended (the log line). */
  onRun: (run: HookRun) => void;
  now?: () => Date;
}

export interface ChangeHook {
  /** Records a change; the command runs for it soon after, never before the caller's turn of the event loop ends. */
  notify(change: Change): void;
  /** Refuses new changes, and resolves once every recorded one has had its run. */
  close(): Promise<void>;
}

interface Pending {
  event: ChangeKind;
  time: string;
  merged: number;
  orgs: Set<string>;
  paths: Set<string>;
  tags: Set<string>;
}

const sorted = (values: Set<string>) => [...values].sort();

/** True when the change makes nothing stale: no hook runs for it. */
const isEmptyChange = (change: Change) => change.paths.length === 0 && change.tags.length === 0;

/** Signals a process group; one already gone is no error. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/**
 * @example
 *   const hook = createChangeHook({ command: "./purge.sh", onRun: (run) => console.error(run) });
 *   hook.notify(patchChange(["demo"]));
 *   await hook.close();
 */
export function createChangeHook(options: ChangeHookOptions): ChangeHook {
  const timeoutMs = options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const now = options.now ?? (() => new Date());
  // In order of each kind's first waiting change.
  const pending = new Map<ChangeKind, Pending>();
  let running = false;
  let closed = false;
  const idle: (() => void)[] = [];

  function runOnce(event: ChangeEvent): Promise<HookRun> {
    const started = performance.now();
    const base = { event: event.event, merged: event.merged, paths: event.paths.length, tags: event.tags.length };
    return new Promise((resolve) => {
      // Its own process group, so that the timeout reaches every process of a pipeline.
      const child = spawn("/bin/sh", ["-c", options.command], { detached: true, stdio: ["pipe", "ignore", "pipe"] });
      let stderr = "";
      let timedOut = false;
      let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
      let spawnError: Error | null = null;
      const timers: NodeJS.Timeout[] = [];
      const finish = () => {
        for (const timer of timers) clearTimeout(timer);
        const status = timedOut ? "timeout" : exit?.code === 0 ? "ok" : "failed";
        const ms = Math.round(performance.now() - started);
        const run: HookRun = { ...base, status, exitCode: exit?.code ?? null, signal: exit?.signal ?? null, ms, stderr };
        if (spawnError) run.error = spawnError.message;
        resolve(run);
      };
      child.once("error", (error) => {
        spawnError = error;
        if (child.pid === undefined) finish();
      });
      if (child.pid === undefined) return;
      const pid = child.pid;
      child.stderr!.setEncoding("utf8");
      child.stderr!.on("data", (chunk: string) => {
        stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
      });
      // A command may exit without reading its stdin: the write then fails, and that is no failure of the run.
      child.stdin!.on("error", () => undefined);
      child.stdin!.end(`${JSON.stringify(event)}\n`);
      timers.push(
        setTimeout(() => {
          timedOut = true;
          signalGroup(pid, "SIGTERM");
          timers.push(setTimeout(() => signalGroup(pid, "SIGKILL"), killGraceMs));
        }, timeoutMs),
      );
      child.once("exit", (code, signal) => {
        exit = { code, signal };
        for (const timer of timers.splice(0)) clearTimeout(timer);
        signalGroup(pid, "SIGKILL");
        // Something outside the group may still hold stderr open; the run is over all the same.
        timers.push(setTimeout(() => child.stderr!.destroy(), killGraceMs));
      });
      child.once("close", finish);
    });
  }

  function takeNext(): ChangeEvent | null {
    const first = pending.values().next();
    if (first.done) return null;
    const next = first.value;
    pending.delete(next.event);
    return {
      event: next.event,
      time: next.time,
      merged: next.merged,
      orgs: sorted(next.orgs),
      paths: sorted(next.paths),
      tags: sorted(next.tags),
    };
  }

  function kick(): void {
    if (running) return;
    if (pending.size === 0) {
      for (const resolve of idle.splice(0)) resolve();
      return;
    }
    running = true;
    setImmediate(() => void step());
  }

  async function step(): Promise<void> {
    const event = takeNext();
    try {
      if (event) options.onRun(await runOnce(event));
    } finally {
      running = false;
      kick();
    }
  }

  return {
    notify(change) {
      if (closed || isEmptyChange(change)) return;
      let waiting = pending.get(change.event);
      if (!waiting) {
        waiting = { event: change.event, time: now().toISOString(), merged: 0, orgs: new Set(), paths: new Set(), tags: new Set() };
        pending.set(change.event, waiting);
      }
      waiting.merged++;
      for (const org of change.orgs) waiting.orgs.add(org);
      for (const p of change.paths) waiting.paths.add(p);
      for (const tag of change.tags) waiting.tags.add(tag);
      kick();
    },
    close() {
      closed = true;
      return new Promise<void>((resolve) => {
        idle.push(resolve);
        kick();
      });
    },
  };
}

/** A run as one line of the server's JSON log: an error line when the command failed or hung. */
export function hookLogLine(run: HookRun): Record<string, unknown> {
  const line: Record<string, unknown> = { msg: "on-change", ...run };
  if (run.status !== "ok") line.level = "error";
  else delete line.stderr;
  return line;
}

/** A run as a line for a person (build, dev). */
export function describeHookRun(run: HookRun): string {
  const what = `on-change (${run.event}: ${run.paths} paths, ${run.tags} tags${run.merged > 1 ? `, ${run.merged} changes merged` : ""})`;
  if (run.status === "ok") return `${what} ran in ${run.ms} ms`;
  const why =
    run.status === "timeout"
      ? `was killed after ${run.ms} ms (timeout)`
      : run.error
        ? `could not start: ${run.error}`
        : `failed (${run.signal ? `signal ${run.signal}` : `exit ${run.exitCode}`}) after ${run.ms} ms`;
  const tail = run.stderr.trim();
  return `${what} ${why}${tail ? `: ${tail}` : ""}`;
}
