/**
 * What an entry of the content folder is, a symbolic link followed to its end:
 * a file, a folder, something else (a pipe, a socket, a device), or a link
 * that leads nowhere, and why. list-posts.ts decides what each means.
 */
import { statSync, type Dirent, type Stats } from "node:fs";
import { isErrnoCode } from "../errno.js";

/** The entry was removed after its folder was listed. */
export const isGone = (error: unknown): boolean => isErrnoCode(error, "ENOENT", "ENOTDIR");

/** Why an entry cannot be read, said to a person. */
export function unreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EACCES" || code === "EPERM") return "cannot be read (permission denied); check its permissions";
  if (code === "ENAMETOOLONG") return "cannot be read: its path is longer than the system allows; nest fewer folders";
  return `cannot be read: ${(error as Error).message}`;
}

/** A link that leads nowhere is `broken`, with the words that say why. */
export type Classified =
  | { kind: "file"; stats: Stats }
  | { kind: "folder"; stats: Stats }
  | { kind: "other"; what: string }
  | { kind: "broken"; why: string };

/** What `readdir` says of an entry, or `lstat` of a path: the same questions. */
export type EntryType = Pick<Dirent, "isSymbolicLink" | "isDirectory" | "isFile" | "isFIFO" | "isSocket">;

function otherKind(type: Pick<EntryType, "isFIFO" | "isSocket">): string {
  if (type.isFIFO()) return "a named pipe";
  if (type.isSocket()) return "a socket";
  return "a device";
}

/** An entry, a link followed to its end. */
export function classify(absolute: string, type: EntryType): Classified {
  if (!type.isSymbolicLink()) {
    if (type.isDirectory()) return { kind: "folder", stats: statSync(absolute) };
    if (type.isFile()) return { kind: "file", stats: statSync(absolute) };
    return { kind: "other", what: otherKind(type) };
  }
  let stats: Stats;
  try {
    stats = statSync(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return { kind: "broken", why: "which leads back to itself through links (a loop)" };
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "broken", why: "which does not exist" };
    throw error;
  }
  if (stats.isDirectory()) return { kind: "folder", stats };
  if (stats.isFile()) return { kind: "file", stats };
  return { kind: "other", what: otherKind(stats) };
}
