/**
 * Whether `--out` holds a tree a build published: the server refuses to start
 * without one, since it would answer 404 to every request and look broken
 * rather than unbuilt. A published tree with no organization in it is still
 * one (a database with no organization yet builds exactly that).
 */
import { existsSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { UsageError } from "../errors.js";
import { liveGenerationSync, treeStoreOf } from "../emit/tree-store.js";

interface MissingTree {
  why: string;
  /** Something `cdsnap build` would refuse to replace: it must go first. */
  foreign: boolean;
}

/** Why `out` holds no published tree; null when it holds one. */
export function missingTree(out: string): MissingTree | null {
  const store = treeStoreOf(out);
  const live = liveGenerationSync(store);
  if (live) return existsSync(live.tree) ? null : { why: `it links to ${readlinkSync(store.out)}, which is gone`, foreign: false };
  let info;
  try {
    info = lstatSync(store.out);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
    return { why: "nothing is there yet", foreign: false };
  }
  if (info.isDirectory() && readdirSync(store.out).length === 0) return { why: "it is an empty folder", foreign: false };
  const what = info.isSymbolicLink() ? "a symbolic link" : info.isDirectory() ? "a folder" : "a file";
  return { why: `it is ${what} cdsnap did not make (a build makes --out a link to its tree)`, foreign: true };
}

/**
 * Throws the usage error of a server started without a published tree.
 *
 * @example
 *   assertPublishedTree("site", "cdsnap.db");
 *   // UsageError: there is no published tree at /srv/site: nothing is there yet; make one with: cdsnap build --db …
 */
export function assertPublishedTree(out: string, db: string): void {
  const missing = missingTree(out);
  if (missing === null) return;
  const absolute = treeStoreOf(out).out;
  const build = `cdsnap build --db ${db} --content <folder of posts> --out ${absolute}`;
  throw new UsageError(
    `there is no published tree at ${absolute}: ${missing.why}; ` +
      (missing.foreign ? `move it away or choose another --out, then make one with: ${build}` : `make one with: ${build}`),
  );
}
