/**
 * Child processes and temporary folders of a benchmark run: each measured
 * command runs as its own `node` process (wall time from spawn to exit, peak
 * RSS from bench/rss-hook.mjs); every child is killed and every temporary
 * folder removed when the run ends, however it ends.
 *
 * Work folders go under {@link benchDir} (tmpfs by default, so that the cost of
 * creating tens of thousands of files on a disk volume, which varies several-fold
 * from run to run, does not hide the tool's own work), and the information-only
 * disk measurements under {@link diskDir}.
 */
import { execFileSync, spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
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
 * does not swap the code under measurement. It sits in dist/bench/cli/ so that its
 * packages still resolve from the project's node_modules.
 */
export const CLI = path.join(ROOT, "dist", "bench", "cli", "cli.js");

export function snapshotCli(): void {
  const dir = path.dirname(CLI);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // With what it finds beside itself: the chunks its commands import, and the parse worker.
  for (const name of readdirSync(path.join(ROOT, "dist"))) {
    if (name === "cli.js" || name === "parse-worker.js" || /^chunk-\w+\.js$/.test(name)) copyFileSync(path.join(ROOT, "dist", name), path.join(dir, name));
  }
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

/** A folder that exists and that this process may create entries in. */
function writableDir(dir: string): boolean {
  try {
    if (!statSync(dir).isDirectory()) return false;
    accessSync(dir, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function dirFromEnv(name: string, fallback: () => string): string {
  const raw = process.env[name];
  if (!raw) return fallback();
  const dir = path.resolve(raw);
  if (!writableDir(dir)) throw new Error(`${name}=${raw}: not a folder this process can write in`);
  return dir;
}

/** Where every measured build reads and writes: BENCH_DIR, else /dev/shm when usable, else the OS temp folder. */
export const benchDir = (): string => dirFromEnv("BENCH_DIR", () => (writableDir("/dev/shm") ? "/dev/shm" : os.tmpdir()));

/** Where the information-only disk figures are measured: BENCH_DISK_DIR, else the OS temp folder; null with BENCH_DISK=0. */
export const diskDir = (): string | null => (process.env.BENCH_DISK === "0" ? null : dirFromEnv("BENCH_DISK_DIR", () => os.tmpdir()));

/** /proc/mounts escapes spaces and the like as octal (`\040`). */
const unescapeMount = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

/**
 * The filesystem type `dir` lives on: the last-mounted, longest mount point of
 * /proc/mounts that holds it (`ext4`, `tmpfs`), else what `stat -f` says, else "unknown".
 */
export function filesystemType(dir: string): string {
  try {
    const real = realpathSync(dir);
    let best: { mount: string; type: string } | null = null;
    for (const line of readFileSync("/proc/mounts", "utf8").split("\n")) {
      const [, rawMount, type] = line.split(" ");
      if (!rawMount || !type) continue;
      const mount = unescapeMount(rawMount);
      const holds = mount === "/" || real === mount || real.startsWith(`${mount}/`);
      if (holds && (!best || mount.length >= best.mount.length)) best = { mount, type };
    }
    if (best) return best.type;
  } catch {
    // Not Linux, or /proc not mounted: ask stat.
  }
  try {
    return execFileSync("stat", ["-f", "-c", "%T", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() || "unknown";
  } catch {
    return "unknown";
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

/** A temporary folder under `base` (default {@link benchDir}), removed at exit (or earlier with {@link removeTemp}). */
export function makeTemp(prefix: string, base: string = benchDir()): string {
  const dir = mkdtempSync(path.join(base, prefix));
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

/**
 * Flushes what earlier steps left to the disk (dirty pages, and the discards of
 * removed trees on a volume mounted with `discard`) so that it is not billed to
 * the next timed step: without it the same floor measured 2.8 s, then 10 s, then
 * 13 s in a row.
 */
function settleDisk(): void {
  execFileSync("sync");
}

/** Runs `node --import rss-hook <args>` to completion, after a `sync`; throws on a non-zero exit. */
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
