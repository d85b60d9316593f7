/**
 * Where the published tree lives and how a new one replaces it.
 *
 * `--out` is a symbolic link to one generation's tree:
 *
 *     site -> .site.cdsnap/gens/000007/tree
 *     .site.cdsnap/gens/000007/tree/api/organizations/…   the files a CDN serves
 *     .site.cdsnap/gens/000007/pages/<orgId>.json         D8 membership, never served
 *     .site.cdsnap/state.sqlite                           what the live one was built from (build-state.ts)
 *     .site.cdsnap/lock                                   one build at a time
 *
 * A build writes the next generation beside the live one and replaces the link
 * with rename(2), so `--out` is never missing, half-written or a mix of two
 * builds, and a failed or killed build leaves it exactly as it was. The live
 * generation and the one it was made from are kept; the next build makes its
 * generation out of the latter (see recycleGeneration), never the live one.
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, readFile, readlink, rename, rm, rmdir, symlink, writeFile, unlink } from "node:fs/promises";
import { readlinkSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { isErrnoCode, orNullOn } from "../errno.js";
import { UsageError } from "../errors.js";

export interface TreeStore {
  /** The `--out` path as given, made absolute. */
  out: string;
  /** `.<name>.cdsnap` beside `--out`. */
  stateDir: string;
  gensDir: string;
}

/**
 * Where `build --preview` writes the preview tree: beside `--out`, a tree
 * store of its own (`site.preview`, `.site.preview.cdsnap/`), never inside the public one.
 */
export const previewOutOf = (out: string): string => `${path.resolve(out)}.preview`;

export function treeStoreOf(out: string): TreeStore {
  const absolute = path.resolve(out);
  const stateDir = path.join(path.dirname(absolute), `.${path.basename(absolute)}.cdsnap`);
  return { out: absolute, stateDir, gensDir: path.join(stateDir, "gens") };
}

export interface Generation {
  id: string;
  dir: string;
  tree: string;
}

export function generation(store: TreeStore, id: string): Generation {
  const dir = path.join(store.gensDir, id);
  return { id, dir, tree: path.join(dir, "tree") };
}

export function pagesFileOf(gen: Pick<Generation, "dir">, orgId: string): string {
  return path.join(gen.dir, "pages", `${orgId}.json`);
}

function genIdFromLink(target: string): string | null {
  const match = /(?:^|\/)gens\/(\d{6,})\/tree$/.exec(target);
  return match ? match[1]! : null;
}

/** The live generation, or null before the first build. */
export async function liveGeneration(store: TreeStore): Promise<Generation | null> {
  const info = await orNullOn(lstat(store.out), "ENOENT", "ENOTDIR");
  if (!info?.isSymbolicLink()) return null;
  const id = genIdFromLink(await readlink(store.out));
  return id ? generation(store, id) : null;
}

/** The live generation, synchronously (the server resolves it per request). */
export function liveGenerationSync(store: TreeStore): Generation | null {
  let target: string;
  try {
    target = readlinkSync(store.out);
  } catch (error) {
    // Nothing there yet, or not a link (EINVAL): no build published it.
    if (isErrnoCode(error, "ENOENT", "ENOTDIR", "EINVAL")) return null;
    throw error;
  }
  const id = genIdFromLink(target);
  return id ? generation(store, id) : null;
}

/** Fails early, before any work, when `--out` is something cdsnap must not replace. */
export async function assertReplaceable(store: TreeStore): Promise<void> {
  const info = await orNullOn(lstat(store.out), "ENOENT");
  if (!info) return;
  if (info.isSymbolicLink()) {
    if (genIdFromLink(await readlink(store.out)) === null) {
      throw new UsageError(`--out ${store.out} is a symbolic link cdsnap did not make; remove it or choose another path`);
    }
    return;
  }
  if (info.isDirectory() && (await readdir(store.out)).length === 0) return;
  throw new UsageError(
    `--out ${store.out} already exists and was not made by cdsnap; move it away or choose another path`,
  );
}

export async function nextGenerationId(store: TreeStore): Promise<string> {
  let max = 0;
  // Missing until the first generation is made.
  const names = (await orNullOn(readdir(store.gensDir), "ENOENT")) ?? [];
  for (const name of names) if (/^\d+$/.test(name)) max = Math.max(max, Number(name));
  return String(max + 1).padStart(6, "0");
}

/**
 * Makes `next` out of generation `baseId`, the one the live generation was
 * made from (never served since, and written only by cdsnap), keeping only
 * its tree: that tree differs from the live one by exactly what the live
 * one's build changed, so bringing it up to date costs what changed rather
 * than a link per file. False when it is not there.
 */
export async function recycleGeneration(store: TreeStore, baseId: string, next: Generation): Promise<boolean> {
  const from = generation(store, baseId);
  try {
    await rename(from.dir, next.dir);
  } catch (error) {
    if (isErrnoCode(error, "ENOENT")) return false;
    throw error;
  }
  for (const name of await readdir(next.dir)) {
    if (name !== "tree") await rm(path.join(next.dir, name), { recursive: true, force: true });
  }
  return true;
}

/** Points `--out` at a generation, atomically. */
export async function swapTo(store: TreeStore, gen: Generation): Promise<void> {
  const target = path.relative(path.dirname(store.out), gen.tree);
  const temp = `${store.out}.${randomBytes(6).toString("hex")}.link`;
  await symlink(target, temp);
  try {
    const info = await orNullOn(lstat(store.out), "ENOENT");
    // Only an empty folder can be here (assertReplaceable); rename cannot replace it with a link.
    if (info?.isDirectory()) await rmdir(store.out);
    await rename(temp, store.out);
  } catch (error) {
    // The failure above is the one to report; a temporary link left behind serves nothing.
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * Removes every generation but the live one and the one before it: readers that
 * resolved the link an instant before a swap still find their files.
 */
export async function pruneGenerations(store: TreeStore, keep: readonly string[]): Promise<void> {
  const names = await readdir(store.gensDir);
  const kept = new Set(keep);
  await Promise.all(
    names.filter((n) => !kept.has(n)).map((n) => rm(path.join(store.gensDir, n), { recursive: true, force: true })),
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes the build lock of this `--out`. A lock left by a build that was killed
 * (its process is gone) is taken over; a live one is an error naming its owner.
 */
export async function acquireBuildLock(store: TreeStore): Promise<() => Promise<void>> {
  await mkdir(store.stateDir, { recursive: true });
  const lockFile = path.join(store.stateDir, "lock");
  const owner = JSON.stringify({ pid: process.pid, host: hostname() });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(lockFile, owner, { flag: "wx" }).catch(async (error: NodeJS.ErrnoException) => {
        // Created but not written (a full disk): leave no empty lock behind.
        if (error.code !== "EEXIST") await rm(lockFile, { force: true });
        throw error;
      });
      return async () => {
        await rm(lockFile, { force: true });
        // A first build that failed leaves nothing behind, not even this folder (otherwise it holds the generations and state).
        await rmdir(store.stateDir).catch((error: unknown) => {
          if (!isErrnoCode(error, "ENOTEMPTY", "EEXIST")) throw error;
        });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      // Gone since it was found: released, so taken like a stale one below.
      const text = (await orNullOn(readFile(lockFile, "utf8"), "ENOENT")) ?? "";
      let held: { pid?: number; host?: string } = {};
      try {
        held = JSON.parse(text) as typeof held;
      } catch {
        // empty or half-written: see below
      }
      // A lock that cannot be parsed was left half-written by a killed build.
      const stale = held.pid === undefined || (held.host === hostname() && !isAlive(held.pid));
      if (!stale) {
        throw new UsageError(
          `another build (pid ${held.pid} on ${held.host}) is writing ${store.out}; wait for it to finish`,
        );
      }
      await rm(lockFile, { force: true });
    }
  }
  throw new UsageError(`could not take the build lock ${lockFile}`);
}
