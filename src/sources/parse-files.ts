/**
 * Reading and parsing one post file: strict UTF-8, inside the content folder
 * once links are resolved, front matter validated, excerpt derived. Runs in the
 * main thread or in a parse worker (parse-pool.ts).
 *
 * The file calls are synchronous: one file is open at a time, and a plain
 * system call costs a few microseconds where a promise through the thread pool
 * cost more than the call itself (a third of a 10k build's main thread went to
 * per-file fs/promises calls).
 */
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readFileSync, realpathSync, type Stats } from "node:fs";
import path from "node:path";
import type { Problem } from "../errors.js";
import type { PostRecord } from "../model/snapshot.js";
import { isGone, unreadable } from "./entry-kind.js";
import { deriveExcerpt } from "../render/excerpt.js";
import { parsePost } from "./front-matter.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

export function fingerprintOf(info: Pick<Stats, "size" | "mtimeMs" | "ctimeMs" | "ino">): string {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}`;
}

export interface Opened {
  text: string;
  fingerprint: string;
  sha256: string;
}

export const sha256Of = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

/**
 * Opens a post without following a link in its last component unless the link
 * stays inside the content folder; links in the folders above are caught by the
 * folder check (realpath of each folder, once per folder).
 */
function openInside(realRoot: string, absolute: string, realDirs: Map<string, string>, rel: string): number {
  const dir = path.dirname(absolute);
  let resolvedDir = realDirs.get(dir);
  if (resolvedDir === undefined) realDirs.set(dir, (resolvedDir = realpathSync(dir)));
  if (resolvedDir !== realRoot && !isInside(realRoot, resolvedDir)) {
    throw new SourceProblem({ where: rel, message: "links outside the content folder; symbolic links must stay inside it" });
  }
  try {
    return openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ELOOP") throw error;
  }
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch {
    throw new SourceProblem({ where: rel, message: "is a broken symbolic link" });
  }
  if (!isInside(realRoot, real)) {
    throw new SourceProblem({ where: rel, message: "links outside the content folder; symbolic links must stay inside it" });
  }
  return openSync(real, constants.O_RDONLY);
}

export class SourceProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

export function readText(realRoot: string, root: string, rel: string, realDirs: Map<string, string>): Opened {
  const fd = openInside(realRoot, path.join(root, rel), realDirs, rel);
  try {
    const info = fstatSync(fd);
    const bytes = readFileSync(fd);
    try {
      return { text: utf8.decode(bytes), fingerprint: fingerprintOf(info), sha256: sha256Of(bytes) };
    } catch {
      throw new SourceProblem({ where: rel, message: "is not valid UTF-8 text" });
    }
  } finally {
    closeSync(fd);
  }
}

/** Decides, as each post is parsed, whether its record keeps the body (bounded memory). */
export type BodyPolicy = (record: PostRecord) => void;

/** Reads and parses one post; the record holds its body unless `policy` lets it go. */
function parseOne(
  contentDir: string,
  realRoot: string,
  rel: string,
  realDirs: Map<string, string>,
  policy?: BodyPolicy,
): PostRecord | Problem[] {
  let opened: Opened;
  try {
    opened = readText(realRoot, contentDir, rel, realDirs);
  } catch (error) {
    if (error instanceof SourceProblem) return [error.problem];
    if (isGone(error)) return [{ where: rel, message: "was removed while the build was reading the posts; run the build again" }];
    return [{ where: rel, message: unreadable(error) }];
  }
  const result = parsePost(rel, opened.text);
  if (!result.post) return result.problems;
  const { body, ...rest } = result.post;
  // Strings cut from the file's text (slugs, dates, links) are views that keep
  // the whole text alive, body included, after the body is let go: the record
  // holds copies instead.
  const record: PostRecord = structuredClone({ ...rest, excerpt: rest.meta.excerpt ?? deriveExcerpt(body), fingerprint: opened.fingerprint, sha256: opened.sha256 });
  record.body = body;
  policy?.(record);
  return record;
}

/** Parses the given files (in this thread); what a parse worker runs on its share. */
export function parseFiles(
  contentDir: string,
  realRoot: string,
  rels: readonly string[],
  policy?: BodyPolicy,
): (PostRecord | Problem[])[] {
  const realDirs = new Map<string, string>();
  return rels.map((rel) => parseOne(contentDir, realRoot, rel, realDirs, policy));
}

