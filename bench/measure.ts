/**
 * Child processes and temporary folders of a benchmark run: each measured
 * command runs as its own `node` process (wall time from spawn to exit, peak
 * RSS from bench/rss-hook.mjs); every child is killed and every temporary
 * folder removed when the run ends, however it ends.
 */
import { execFileSync, spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The repository root: dist/bench/*.js sits two levels below it. */
export const ROOT = (() => {
  const fromBundle = fileURLToPath(new URL("../../", import.meta.url));
  return existsSync(path.join(fromBundle, "package.json")) ? fromBundle : process.cwd();
})();
/**
 * The CLI every step runs: a copy of dist/cli.js taken by {@link snapshotCli} when
 * the run starts, so that a `npm run build:cli` elsewhere during a long run
 * does not swap the code under measurement. It sits in dist/bench/ so that its
 * packages still resolve from the project's node_modules.
 */
export const CLI = path.join(ROOT, "dist", "bench", "cdsnap-cli.js");

export function snapshotCli(): void {
  copyFileSync(path.join(ROOT, "dist", "cli.js"), CLI);
}

/** The commit measured, with a note when src/ has uncommitted changes. */
export function describeCode(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = git("status", "--porcelain", "--", "src") !== "";
    return `commit ${git("rev-parse", "--short", "HEAD")}${dirty ? " + uncommitted changes in src/" : ""}`;
  } catch {
    return "commit unknown";
  }
}
const HOOK = pathToFileURL(path.join(ROOT, "bench", "rss-hook.mjs")).href;
const RSS_TAG = /cdsnap-bench-maxrss-kib=(\d+)/;

const children = new Set<ChildProcess>();
const temps = new Set<string>();

function cleanUp(): void {
  for (const child of children) child.kill("SIGKILL");
  children.clear();
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
  temps.clear();
}

process.on("exit", cleanUp);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping children and removing temporary folders\n`);
    cleanUp();
    process.exit(130);
  });
}

/** A temporary folder removed at exit (or earlier with {@link removeTemp}). */
export function makeTemp(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.add(dir);
  return dir;
}

export function removeTemp(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  temps.delete(dir);
}

/** The environment of a child: the CLI's CDSNAP_* variables of the caller's shell never leak in. */
export function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("CDSNAP_")) delete env[name];
  return env;
}

/** Starts `node <args>` and keeps track of it so it dies with the run. */
export function spawnNode(args: readonly string[], stdio: StdioOptions): ChildProcess {
  const child = spawn(process.execPath, args, { stdio, env: childEnv(), cwd: ROOT });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

export interface Measured {
  ms: number;
  /** Peak resident set size in KiB, null when the hook did not report. */
  maxRssKiB: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node --import rss-hook <args>` to completion; throws on a non-zero exit. */
/**
 * Flushes what earlier steps left to the disk (dirty pages, and the discards of
 * removed trees on a volume mounted with `discard`) so that it is not billed to
 * the next timed step: without it the same floor measured 2.8 s, then 10 s, then
 * 13 s in a row.
 */
function settleDisk(): void {
  execFileSync("sync");
}

export async function runMeasured(args: readonly string[]): Promise<Measured> {
  settleDisk();
  const started = process.hrtime.bigint();
  const child = spawnNode(["--import", HOOK, ...args], ["ignore", "pipe", "pipe"]);
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (exitCode) => resolve(exitCode));
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (code !== 0) {
    throw new Error(`node ${args.join(" ")} exited with ${code}:\n${stderr.slice(-4000)}`);
  }
  const rss = RSS_TAG.exec(stderr);
  return { ms, maxRssKiB: rss ? Number(rss[1]) : null, stdout, stderr: stderr.replace(RSS_TAG, "").trim() };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Progress goes to stderr: stdout carries the table only. */
export function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
