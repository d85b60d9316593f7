/**
 * Tree files in memory, keyed by path and checked against the file's identity
 * (inode, size, mtime) on every request. Files in the tree are never changed in
 * place, only replaced by rename, so an unchanged identity means unchanged
 * bytes. A miss opens the file once and reads bytes and stats from the same
 * descriptor, so the bytes, the ETag and Content-Length always agree.
 */
import { createHash } from "node:crypto";
import { constants, type BigIntStats } from "node:fs";
import { lstat, open, readlink, realpath, type FileHandle } from "node:fs/promises";
import path from "node:path";

export interface CachedFile {
  bytes: Buffer;
  /** Strong ETag (D10): the SHA-256 of the bytes. */
  etag: string;
  mtime: Date;
}

interface Entry extends CachedFile {
  identity: string;
}

export interface FileCache {
  /**
   * The file's bytes, or null when it is missing, not a regular file, or a link.
   * With `root`, also null when the file is not inside `root` once every link on
   * the way is resolved: O_NOFOLLOW guards the last component only, and a folder
   * of the tree replaced by a link to elsewhere must not be followed either.
   */
  get(file: string, root?: string): Promise<CachedFile | null>;
}

export function etagOf(bytes: Buffer): string {
  return `"${createHash("sha256").update(bytes).digest("hex")}"`;
}

function identityOf(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}`;
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
  } catch {
    // no /proc: fall back to resolving the path
  }
  return realpath(file);
}

export function createFileCache(maxBytes = 64 * 1024 * 1024): FileCache {
  const entries = new Map<string, Entry>();
  const realRoots = new Map<string, string>();
  let total = 0;

  async function realRootOf(root: string): Promise<string> {
    let real = realRoots.get(root);
    if (real === undefined) {
      real = await realpath(root);
      // One root per generation: a few are plenty.
      if (realRoots.size >= 8) realRoots.clear();
      realRoots.set(root, real);
    }
    return real;
  }

  function remember(file: string, entry: Entry): void {
    const old = entries.get(file);
    if (old) total -= old.bytes.length;
    entries.delete(file);
    if (entry.bytes.length > maxBytes / 4) return;
    entries.set(file, entry);
    total += entry.bytes.length;
    for (const [key, value] of entries) {
      if (total <= maxBytes) break;
      entries.delete(key);
      total -= value.bytes.length;
    }
  }

  async function load(file: string, root: string | undefined): Promise<Entry | null> {
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
      return { bytes, etag: etagOf(bytes), mtime: info.mtime, identity: identityOf(info) };
    } finally {
      await handle.close();
    }
  }

  return {
    async get(file, root) {
      const cached = entries.get(file);
      if (cached) {
        const info = await lstat(file, { bigint: true }).catch(() => null);
        if (info && identityOf(info) === cached.identity) {
          entries.delete(file);
          entries.set(file, cached);
          return cached;
        }
      }
      const entry = await load(file, root);
      if (entry) remember(file, entry);
      else if (cached) {
        entries.delete(file);
        total -= cached.bytes.length;
      }
      return entry;
    },
  };
}
