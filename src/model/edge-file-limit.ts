/**
 * The largest file the edge takes: Cloudflare Workers static assets refuse a
 * file over 25 MiB (docs/edge.md), so a tree holding one does not deploy
 * there. `serve` and an R2 bucket take any size, so a larger file is a
 * warning, said by `check` and by every build, never an error.
 */
import type { SourceWarning } from "../errors.js";

export const EDGE_FILE_LIMIT = 25 * 2 ** 20;
export const FILE_TOO_LARGE = "file-too-large";

const WHY = "Cloudflare Workers static assets refuse files over 25 MiB";

function mebibytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** A post file over the limit: the tree files of a published post are at least as large. */
export function postFileWarning(rel: string, bytes: number): SourceWarning {
  return {
    rule: FILE_TOO_LARGE,
    where: rel,
    message:
      `is ${mebibytes(bytes)}, and the tree files a build makes of it once published at least as large; ${WHY}: ` +
      "split it into shorter posts, or publish the tree from R2",
  };
}

export interface TreeFileSize {
  /** The file's path in the tree. */
  rel: string;
  bytes: number;
  /** The post file it is rendered from, for a post's files. */
  post?: string;
}

/**
 * One warning per tree file over the limit, at the post it comes from (once,
 * for its largest file) or at the file; posts in `warned` already have one.
 */
export function treeFileWarnings(files: Iterable<TreeFileSize>, warned: ReadonlySet<string>): SourceWarning[] {
  const largest = new Map<string, TreeFileSize>();
  const warnings: SourceWarning[] = [];
  for (const file of files) {
    if (file.bytes <= EDGE_FILE_LIMIT) continue;
    if (file.post === undefined) {
      const message = `is ${mebibytes(file.bytes)}; ${WHY}: publish the tree from R2, or serve it with cdsnap serve`;
      warnings.push({ rule: FILE_TOO_LARGE, where: file.rel, message });
    } else if (!warned.has(file.post) && file.bytes > (largest.get(file.post)?.bytes ?? 0)) {
      largest.set(file.post, file);
    }
  }
  for (const [post, file] of largest) {
    const message = `makes the tree file ${file.rel} of ${mebibytes(file.bytes)}; ${WHY}: shorten or split the post, or publish the tree from R2`;
    warnings.push({ rule: FILE_TOO_LARGE, where: post, message });
  }
  return warnings;
}

/** The posts that have a warning of this rule already. */
export function postsWarned(warnings: readonly SourceWarning[]): Set<string> {
  return new Set(warnings.filter((w) => w.rule === FILE_TOO_LARGE).map((w) => w.where));
}
