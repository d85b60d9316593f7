import { readdirSync } from "node:fs";
import path from "node:path";
import { compareCodeUnits } from "../render/canonical-json.js";

export interface Listing {
  files: string[];
  /** Folders below the root, parents before children. */
  dirs: string[];
  /** Symbolic links, sockets and the like: never part of a tree. */
  others: string[];
}

/**
 * Every entry under `root`, as sorted `/`-separated relative paths, one directory
 * level at a time. Synchronous: tens of thousands of folders cost far less as
 * plain readdir calls than as promises through the thread pool.
 */
export function listTree(root: string): Listing {
  const listing: Listing = { files: [], dirs: [], others: [] };
  let level = [""];
  while (level.length > 0) {
    const entries = level.map((dir) =>
      readdirSync(path.join(root, dir), { withFileTypes: true }).map((e) => ({ rel: dir ? `${dir}/${e.name}` : e.name, e })),
    );
    level = [];
    for (const { rel, e } of entries.flat()) {
      if (e.isDirectory()) level.push(rel);
      else (e.isFile() ? listing.files : listing.others).push(rel);
    }
    listing.dirs.push(...level);
  }
  listing.files.sort(compareCodeUnits);
  listing.others.sort(compareCodeUnits);
  return listing;
}
