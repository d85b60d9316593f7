/**
 * Tree files in memory, keyed by path and checked against the file's identity
 * (inode, size, mtime) on every request. Files in the tree are never changed in
 * place, only replaced by rename, so an unchanged identity means unchanged
 * bytes. A miss opens the file once and reads bytes and stats from the same
 * descriptor, so the bytes, the ETag and Content-Length always agree.
 */
import { createHash } from "node:crypto";
import { constants, type BigIntStats } from "node:fs";
import { lstat, open } from "node:fs/promises";

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
  /** The file's bytes, or null when it is missing or not a regular file (links are never followed). */
  get(file: string): Promise<CachedFile | null>;
}

export function etagOf(bytes: Buffer): string {
  return `"${createHash("sha256").update(bytes).digest("hex")}"`;
}

function identityOf(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}`;
}

export function createFileCache(maxBytes = 64 * 1024 * 1024): FileCache {
  const entries = new Map<string, Entry>();
  let total = 0;

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

  async function load(file: string): Promise<Entry | null> {
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
      const bytes = await handle.readFile();
      return { bytes, etag: etagOf(bytes), mtime: info.mtime, identity: identityOf(info) };
    } finally {
      await handle.close();
    }
  }

  return {
    async get(file) {
      const cached = entries.get(file);
      if (cached) {
        const info = await lstat(file, { bigint: true }).catch(() => null);
        if (info && identityOf(info) === cached.identity) {
          entries.delete(file);
          entries.set(file, cached);
          return cached;
        }
      }
      const entry = await load(file);
      if (entry) remember(file, entry);
      else if (cached) {
        entries.delete(file);
        total -= cached.bytes.length;
      }
      return entry;
    },
  };
}
