/**
 * Tree files in memory, keyed by path and checked against the file's identity
 * (device, inode, size, mtime in ns) on every request. Files in the tree are never changed in
 * place, only replaced by rename, so an unchanged identity means unchanged
 * bytes. A miss opens the file once and reads bytes and stats from the same
 * descriptor, so the bytes, the ETag and Content-Length always agree.
 */
import { createHash } from "node:crypto";
import { constants, lstatSync, type BigIntStats } from "node:fs";
import { open, readlink, realpath, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { evictToFit } from "./second-chance.js";

export interface CachedFile {
  bytes: Buffer;
  /** Strong ETag (D10): the SHA-256 of the bytes. */
  etag: string;
  mtime: Date;
}

interface Entry extends CachedFile {
  identity: Identity;
  /** Hit since the eviction scan last passed it (second chance instead of moving it on every hit). */
  used: boolean;
}

type Identity = Pick<BigIntStats, "dev" | "ino" | "size" | "mtimeNs">;

export interface LoadOptions {
  /**
   * Null unless the file is inside `root` once every link on the way is
   * resolved: O_NOFOLLOW guards the last component only, and a folder of the
   * tree replaced by a link to elsewhere must not be followed either.
   */
  root?: string;
  /**
   * The path the bytes are remembered under, if not `file`: another name of the
   * same file (through a linked folder), whose lstat {@link FileCache.peek} checks.
   */
  key?: string;
}

export interface FileCache {
  /**
   * The bytes remembered under `key` if an lstat of `key` still finds the file
   * they were read from, else null. Synchronous on purpose: an lstat of a cached
   * dentry is a few microseconds, while the promise API's trip through the thread
   * pool cost a cached GET several times that.
   */
  peek(key: string): CachedFile | null;
  /** The file's bytes (cached, or read afresh), or null when it is missing, not a regular file, or a link. */
  get(file: string, options?: LoadOptions): Promise<CachedFile | null>;
}

export function etagOf(bytes: Buffer): string {
  return `"${createHash("sha256").update(bytes).digest("hex")}"`;
}

function identityOf(info: BigIntStats): Identity {
  return { dev: info.dev, ino: info.ino, size: info.size, mtimeNs: info.mtimeNs };
}

function sameFile(a: Identity, b: Identity): boolean {
  return a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.size === b.size && a.dev === b.dev;
}

/** What an lstat of a path that no longer leads to a file of the tree fails with. */
const NOT_THERE = new Set(["ENOENT", "ENOTDIR", "ELOOP", "EACCES", "ENAMETOOLONG"]);

/** What reading /proc/self/fd fails with where there is no /proc, or none open to this process. */
const NO_PROC = new Set(["ENOENT", "ENOTDIR", "EACCES", "EPERM"]);

function lstatOrNull(file: string): BigIntStats | null {
  try {
    return lstatSync(file, { bigint: true, throwIfNoEntry: false }) ?? null;
  } catch (error) {
    // Not the cached file any more; a load says what it is.
    if (NOT_THERE.has((error as NodeJS.ErrnoException).code ?? "")) return null;
    throw error;
  }
}

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/**
 * Where an open file really is. On Linux /proc names the file the descriptor
 * holds (no race with a rename of a folder between open and check); elsewhere
 * the path is resolved again.
 */
async function realPathOf(handle: FileHandle, file: string): Promise<string> {
  try {
    const linked = await readlink(`/proc/self/fd/${handle.fd}`);
    if (linked.startsWith("/")) return linked;
  } catch (error) {
    // No /proc (not Linux, not mounted, or closed to this process): the path is resolved instead.
    if (!NO_PROC.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
  }
  return realpath(file);
}

/** The real path of each root that files are loaded from (one per generation), resolved once. */
function realRootMemo(): (root: string) => Promise<string> {
  const realRoots = new Map<string, string>();
  return async function realRootOf(root) {
    let real = realRoots.get(root);
    if (real === undefined) {
      real = await realpath(root);
      // One root per generation: a few are plenty.
      if (realRoots.size >= 8) realRoots.clear();
      realRoots.set(root, real);
    }
    return real;
  };
}

/** Reads `file` afresh: null when it is missing, not a regular file, a link, or outside `root`. */
async function load(file: string, root: string | undefined, realRootOf: (root: string) => Promise<string>): Promise<Entry | null> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP" || code === "EISDIR") return null;
    throw error;
  }
  try {
    const info = await handle.stat({ bigint: true });
    if (!info.isFile()) return null;
    if (root !== undefined && !isInside(await realRootOf(root), await realPathOf(handle, file))) return null;
    const bytes = await handle.readFile();
    return { bytes, etag: etagOf(bytes), mtime: info.mtime, identity: identityOf(info), used: false };
  } finally {
    await handle.close();
  }
}

export function createFileCache(maxBytes = 64 * 1024 * 1024): FileCache {
  const entries = new Map<string, Entry>();
  const realRootOf = realRootMemo();
  let total = 0;

  function remember(key: string, entry: Entry): void {
    forget(key);
    if (entry.bytes.length > maxBytes / 4) return;
    entries.set(key, entry);
    total = evictToFit(entries, total + entry.bytes.length, maxBytes, (old) => old.bytes.length);
  }

  function forget(key: string): void {
    const old = entries.get(key);
    if (!old) return;
    entries.delete(key);
    total -= old.bytes.length;
  }

  function peek(key: string): CachedFile | null {
    const cached = entries.get(key);
    if (!cached) return null;
    const info = lstatOrNull(key);
    if (info && sameFile(info, cached.identity)) {
      cached.used = true;
      return cached;
    }
    forget(key);
    return null;
  }

  return {
    peek,
    async get(file, { root, key = file } = {}) {
      const cached = peek(key);
      if (cached) return cached;
      const entry = await load(file, root, realRootOf);
      if (entry) remember(key, entry);
      return entry;
    },
  };
}
