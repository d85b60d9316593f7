/**
 * Notices that a build published something under `--out`: a new live
 * generation, or a build state written anew. Both matter to the schedule: a
 * build that adds a scheduled post changes no byte of the tree (the post is
 * left out), keeps the live generation, and records the new instant in the
 * state alone. Looked at by polling, as db/watch-commits.ts does and for the
 * same reason (file events are not sent on every file system); one readlink
 * and one lstat, microseconds.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { isErrnoCode } from "../errno.js";
import { stateFileOf } from "../emit/build-state.js";
import type { TreeStore } from "../emit/tree-store.js";

export interface BuildStateWatch {
  stop(): void;
}

/** What changes when a build publishes: the link's target, and the state file's identity. */
function signatureOf(store: TreeStore): string {
  let target = "";
  try {
    target = readlinkSync(store.out);
  } catch (error) {
    if (!isErrnoCode(error, "ENOENT", "ENOTDIR", "EINVAL")) throw error;
  }
  const state = lstatSync(stateFileOf(store), { bigint: true, throwIfNoEntry: false });
  return state ? `${target}\n${state.ino}:${state.mtimeNs}:${state.size}` : target;
}

/**
 * Calls `onChange` at the first look (every `everyMs`) after a build
 * published; when it returns false (the state could not tell yet: it is
 * being committed), at the next look too. A look that throws is told to
 * `onError`, once per change. Never keeps a process alive on its own.
 */
export function watchBuildState(
  store: TreeStore,
  everyMs: number,
  onChange: () => boolean,
  onError: (error: unknown) => void,
): BuildStateWatch {
  let seen = signatureOf(store);
  const timer = setInterval(() => {
    try {
      const before = seen;
      seen = signatureOf(store);
      // One that throws is told once, not at every look.
      if (seen !== before && !onChange()) seen = before;
    } catch (error) {
      onError(error);
    }
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
