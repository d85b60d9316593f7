/**
 * The file calls that make a generation's tree: each creates, links or
 * removes one entry, making a missing folder on the way or removing one left
 * empty. Synchronous: on tmpfs or a warm page cache a plain system call costs
 * microseconds, where a promise per call through libuv's pool cost more than
 * the call (a third of a 10k build's main thread). Nothing stays open between
 * two calls, so the open-file limit is never in play.
 */
import { closeSync, fstatSync, linkSync, mkdirSync, openSync, rmdirSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import type { CategoryRecord, PostRecord } from "../model/snapshot.js";
import type { PreviewStatus } from "../model/api.js";
import { fileOf } from "../api-paths.js";
import { renderPostFiles } from "../render/render-org.js";
import { serializedOnce } from "./file-bytes.js";

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code;

// Folders this process made or found: a tree's files are created in tens of
// thousands of folders, and a failed call costs an exception each (a tenth of
// a full build's main thread when every file tried first and made its folder
// after). A folder removed since (a discarded generation) is made again below.
const folders = new Set<string>();

/** Runs `make` (which creates `file`), its folder made first unless it is known to be there. */
export function inFolder<T>(file: string, make: () => T): T {
  const dir = path.dirname(file);
  if (!folders.has(dir)) {
    if (folders.size > 200_000) folders.clear();
    mkdirSync(dir, { recursive: true });
    folders.add(dir);
    return make();
  }
  try {
    return make();
  } catch (error) {
    if (errno(error) !== "ENOENT") throw error;
    mkdirSync(dir, { recursive: true });
    return make();
  }
}

function unlinkIfThere(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if (errno(error) !== "ENOENT") throw error;
  }
}

/** Removes a file and the folders it leaves empty, up to the tree's root. */
export function removeFile(tree: string, rel: string): void {
  unlinkIfThere(path.join(tree, rel));
  for (let dir = path.dirname(rel); dir !== "."; dir = path.dirname(dir)) {
    try {
      rmdirSync(path.join(tree, dir));
      folders.delete(path.join(tree, dir));
    } catch (error) {
      if (errno(error) === "ENOTEMPTY" || errno(error) === "EEXIST" || errno(error) === "ENOENT") return;
      throw error;
    }
  }
}

/** Puts a hard link of `from` at `rel`, in place of what is there when `replace`. */
export function linkInto(tree: string, from: string, rel: string, replace: boolean): void {
  const to = path.join(tree, rel);
  if (replace) unlinkIfThere(to);
  inFolder(to, () => linkSync(from, to));
}

/**
 * Creates `rel` with `bytes`, in place of what is there when `replace` (a
 * link to the live file, in a copy of the live tree). Exclusive, so bytes can never land
 * in an inode the live tree shares.
 */
export function createFile(tree: string, rel: string, bytes: Buffer, replace: boolean): [ino: number, mtimeMs: number, size: number] {
  const file = path.join(tree, rel);
  if (replace) unlinkIfThere(file);
  const fd = inFolder(file, () => openSync(file, "wx"));
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    const info = fstatSync(fd);
    return [info.ino, info.mtimeMs, info.size];
  } finally {
    closeSync(fd);
  }
}

/** A listed post's files as bytes: by id and by slug are the same object, serialized and hashed once into one buffer. */
export function postFileBytes(
  orgId: string,
  post: PostRecord,
  body: string,
  categories: ReadonlyMap<string, CategoryRecord>,
  status?: PreviewStatus,
): { rel: string; bytes: Buffer; sha256: string }[] {
  const serialized = serializedOnce();
  return renderPostFiles(orgId, post, body, categories, status).map((file) => ({ rel: fileOf(file.route), ...serialized(file.json) }));
}
