/**
 * Reading and parsing one post file: strict UTF-8, inside the content folder
 * once links are resolved, front matter validated, excerpt derived. Runs in the
 * main thread or in a parse worker (parse-pool.ts).
 */
import { constants, type Stats } from "node:fs";
import { open, realpath } from "node:fs/promises";
import path from "node:path";
import { FILE_CONCURRENCY, mapLimit } from "../concurrency.js";
import type { Problem } from "../errors.js";
import type { PostRecord } from "../model/snapshot.js";
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
}

/**
 * Opens a post without following a link in its last component unless the link
 * stays inside the content folder; links in the folders above are caught by the
 * folder check (realpath of each folder, once per folder).
 */
async function openInside(realRoot: string, absolute: string, realDirs: Map<string, Promise<string>>, rel: string) {
  const dir = path.dirname(absolute);
  let realDir = realDirs.get(dir);
  if (!realDir) realDirs.set(dir, (realDir = realpath(dir)));
  const resolvedDir = await realDir;
  if (resolvedDir !== realRoot && !isInside(realRoot, resolvedDir)) {
    throw new SourceProblem({ where: rel, message: "links outside the content folder; symbolic links must stay inside it" });
  }
  try {
    return await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ELOOP") throw error;
  }
  let real: string;
  try {
    real = await realpath(absolute);
  } catch {
    throw new SourceProblem({ where: rel, message: "is a broken symbolic link" });
  }
  if (!isInside(realRoot, real)) {
    throw new SourceProblem({ where: rel, message: "links outside the content folder; symbolic links must stay inside it" });
  }
  return open(real, constants.O_RDONLY);
}

export class SourceProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

export async function readText(realRoot: string, root: string, rel: string, realDirs: Map<string, Promise<string>>): Promise<Opened> {
  const handle = await openInside(realRoot, path.join(root, rel), realDirs, rel);
  try {
    const info = await handle.stat();
    const bytes = await handle.readFile();
    try {
      return { text: utf8.decode(bytes), fingerprint: fingerprintOf(info) };
    } catch {
      throw new SourceProblem({ where: rel, message: "is not valid UTF-8 text" });
    }
  } finally {
    await handle.close();
  }
}

/** Decides, as each post is parsed, whether its record keeps the body (bounded memory). */
export type BodyPolicy = (record: PostRecord) => void;

/** Reads and parses one post; the record holds its body unless `policy` lets it go. */
async function parseOne(
  contentDir: string,
  realRoot: string,
  rel: string,
  realDirs: Map<string, Promise<string>>,
  policy?: BodyPolicy,
): Promise<PostRecord | Problem[]> {
  let opened: Opened;
  try {
    opened = await readText(realRoot, contentDir, rel, realDirs);
  } catch (error) {
    if (error instanceof SourceProblem) return [error.problem];
    return [{ where: rel, message: `cannot be read: ${(error as Error).message}` }];
  }
  const result = parsePost(rel, opened.text);
  if (!result.post) return result.problems;
  const { body, ...rest } = result.post;
  // Strings cut from the file's text (slugs, dates, links) are views that keep
  // the whole text alive, body included, after the body is let go: the record
  // holds copies instead.
  const record: PostRecord = structuredClone({ ...rest, excerpt: rest.meta.excerpt ?? deriveExcerpt(body), fingerprint: opened.fingerprint });
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
): Promise<(PostRecord | Problem[])[]> {
  const realDirs = new Map<string, Promise<string>>();
  return mapLimit(rels, FILE_CONCURRENCY, (rel) => parseOne(contentDir, realRoot, rel, realDirs, policy));
}

