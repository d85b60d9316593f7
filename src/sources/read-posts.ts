/**
 * Finds and parses the markdown posts: `<content>/<orgId>/**\/*.md`. Every file
 * is checked to lie inside the content folder once symlinks are resolved, and
 * decoded as strict UTF-8.
 *
 * Incremental builds hand in the records of the previous build: a file whose
 * identity (size, mtime, ctime, inode) is unchanged is not read again. Bodies
 * are kept in memory up to a budget and read again when rendering needs them,
 * so a 100k-post organization never holds every body at once.
 */
import fg from "fast-glob";
import { constants, type Stats } from "node:fs";
import { open, realpath } from "node:fs/promises";
import path from "node:path";
import { FILE_CONCURRENCY, mapLimit } from "../concurrency.js";
import { UsageError, type Problem } from "../errors.js";
import type { PostRecord } from "../model/snapshot.js";
import { deriveExcerpt } from "../render/excerpt.js";
import { parsePost, splitFrontMatter } from "./front-matter.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Bodies kept in memory, in UTF-16 code units (about twice as many bytes). */
export const DEFAULT_BODY_BUDGET = 64 * 1024 * 1024;

export interface PostsRead {
  /** Posts per organization folder name. */
  byOrg: Map<string, PostRecord[]>;
  problems: Problem[];
  /** Files read and parsed, and files whose previous record was reused. */
  parsed: number;
  reused: number;
}

export interface ReadPostsOptions {
  /** Records of the previous build by file (relative path); reused while the fingerprint matches. */
  previous?: ReadonlyMap<string, PostRecord>;
  bodyBudget?: number;
}

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

export function fingerprintOf(info: Pick<Stats, "size" | "mtimeMs" | "ctimeMs" | "ino">): string {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}`;
}

interface Opened {
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

class SourceProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

async function readText(realRoot: string, root: string, rel: string, realDirs: Map<string, Promise<string>>): Promise<Opened> {
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

/**
 * Reads every post of the named organization folders (all folders when
 * `orgIds` is undefined; then a post outside any folder is a problem too).
 */
export async function readPosts(
  contentDir: string,
  orgIds?: readonly string[],
  options: ReadPostsOptions = {},
): Promise<PostsRead> {
  let realRoot: string;
  try {
    realRoot = await realpath(contentDir);
  } catch {
    throw new UsageError(`content folder ${contentDir} does not exist`);
  }
  const patterns = orgIds ? orgIds.map((id) => `${fg.escapePath(id)}/**/*.md`) : ["**/*.md"];
  const entries = await fg(patterns, { cwd: contentDir, dot: false, followSymbolicLinks: true, onlyFiles: true, stats: true });
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  const problems: Problem[] = [];
  const byOrg = new Map<string, PostRecord[]>();
  for (const id of orgIds ?? []) byOrg.set(id, []);
  const inOrgFolder = entries.filter((entry) => {
    if (entry.path.includes("/")) return true;
    problems.push({ where: entry.path, message: "is outside any organization folder; posts live in <content>/<orgId>/" });
    return false;
  });

  const realDirs = new Map<string, Promise<string>>();
  let kept = 0;
  let parsed = 0;
  let reused = 0;
  const budget = options.bodyBudget ?? DEFAULT_BODY_BUDGET;
  const results = await mapLimit(inOrgFolder, FILE_CONCURRENCY, async (entry): Promise<PostRecord | Problem[]> => {
    const rel = entry.path;
    const previous = options.previous?.get(rel);
    if (previous && entry.stats && previous.fingerprint === fingerprintOf(entry.stats)) {
      reused++;
      const { body: _body, ...record } = previous;
      return record;
    }
    let opened: Opened;
    try {
      opened = await readText(realRoot, contentDir, rel, realDirs);
    } catch (error) {
      if (error instanceof SourceProblem) return [error.problem];
      return [{ where: rel, message: `cannot be read: ${(error as Error).message}` }];
    }
    parsed++;
    const result = parsePost(rel, opened.text);
    if (!result.post) return result.problems;
    const { body, ...rest } = result.post;
    const record: PostRecord = { ...rest, excerpt: rest.meta.excerpt ?? deriveExcerpt(body), fingerprint: opened.fingerprint };
    if (kept + body.length <= budget) {
      kept += body.length;
      record.body = body;
    }
    return record;
  });
  results.forEach((result, i) => {
    if (Array.isArray(result)) {
      problems.push(...result);
      return;
    }
    const orgId = inOrgFolder[i]!.path.split("/")[0]!;
    const list = byOrg.get(orgId) ?? [];
    list.push(result);
    byOrg.set(orgId, list);
  });
  return { byOrg, problems, parsed, reused };
}

/**
 * The body of a post whose body was let go. The file must still be the one
 * that was validated: a file edited while the build runs fails the build
 * rather than publishing what was never checked.
 */
export async function loadBody(contentDir: string, post: PostRecord): Promise<string> {
  if (post.body !== undefined) return post.body;
  let opened: Opened;
  try {
    opened = await readText(await realpath(contentDir), contentDir, post.file, new Map());
  } catch (error) {
    throw new UsageError(`${post.file} could not be read again while building: ${(error as Error).message}`);
  }
  const parts = opened.fingerprint === post.fingerprint ? splitFrontMatter(opened.text.replace(/^\uFEFF/, "")) : null;
  if (parts === null || typeof parts === "string") {
    throw new UsageError(`${post.file} changed while the build ran; run the build again`);
  }
  return parts.body;
}
