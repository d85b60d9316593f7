/**
 * Finds and parses the markdown posts: `<content>/<orgId>/**\/*.md`. Every file
 * is checked to lie inside the content folder once symlinks are resolved, and
 * decoded as strict UTF-8.
 */
import fg from "fast-glob";
import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { FILE_CONCURRENCY, mapLimit } from "../concurrency.js";
import { UsageError, type Problem } from "../errors.js";
import type { PostRecord } from "../model/snapshot.js";
import { parsePost } from "./front-matter.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

export interface PostsRead {
  /** Posts per organization folder name. */
  byOrg: Map<string, PostRecord[]>;
  problems: Problem[];
}

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

async function readOne(root: string, realRoot: string, rel: string): Promise<{ post?: PostRecord; problems: Problem[] }> {
  const absolute = path.join(root, rel);
  let real: string;
  try {
    real = await realpath(absolute);
  } catch {
    return { problems: [{ where: rel, message: "is a broken symbolic link" }] };
  }
  if (!isInside(realRoot, real)) {
    return { problems: [{ where: rel, message: "links outside the content folder; symbolic links must stay inside it" }] };
  }
  let text: string;
  try {
    text = utf8.decode(await readFile(real));
  } catch (error) {
    const message =
      error instanceof TypeError ? "is not valid UTF-8 text" : `cannot be read: ${(error as Error).message}`;
    return { problems: [{ where: rel, message }] };
  }
  return parsePost(rel, text);
}

/**
 * Reads every post of the named organization folders (all folders when
 * `orgIds` is undefined; then a post outside any folder is a problem too).
 */
export async function readPosts(contentDir: string, orgIds?: readonly string[]): Promise<PostsRead> {
  let realRoot: string;
  try {
    realRoot = await realpath(contentDir);
  } catch {
    throw new UsageError(`content folder ${contentDir} does not exist`);
  }
  const patterns = orgIds ? orgIds.map((id) => `${fg.escapePath(id)}/**/*.md`) : ["**/*.md"];
  const files = (await fg(patterns, { cwd: contentDir, dot: false, followSymbolicLinks: true, onlyFiles: true })).sort();

  const problems: Problem[] = [];
  const byOrg = new Map<string, PostRecord[]>();
  for (const id of orgIds ?? []) byOrg.set(id, []);
  const inOrgFolder = files.filter((rel) => {
    if (rel.includes("/")) return true;
    problems.push({ where: rel, message: "is outside any organization folder; posts live in <content>/<orgId>/" });
    return false;
  });
  const results = await mapLimit(inOrgFolder, FILE_CONCURRENCY, (rel) => readOne(contentDir, realRoot, rel));
  results.forEach((result, i) => {
    problems.push(...result.problems);
    if (!result.post) return;
    const orgId = inOrgFolder[i]!.split("/")[0]!;
    const list = byOrg.get(orgId) ?? [];
    list.push(result.post);
    byOrg.set(orgId, list);
  });
  return { byOrg, problems };
}
