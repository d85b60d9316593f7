/**
 * Parsing one post file (read by read-text.ts): front matter validated,
 * excerpt derived. Runs in the main thread or in a parse worker
 * (parse-pool.ts), which loads this module only when there is a post to parse.
 * The markdown lexer is loaded only for a body prose-scan.ts does not read.
 */
import type { Problem } from "../errors.js";
import type { PostRecord } from "../model/snapshot.js";
import { isGone, unreadable } from "./entry-kind.js";
import { scannedExcerpt } from "../render/excerpt.js";
import { parsePost } from "./front-matter.js";
import { readText, SourceProblem, type Opened } from "./read-text.js";

/** Derives a body's excerpt, marked's lexer included (excerpt-lexer.ts). */
type Excerpter = (body: string) => string;

/** The lexer, loaded by the first body that needs it. */
let lexer: Excerpter | undefined;

/** What parseOne answers for a body only the lexer reads, before it is loaded. */
const WANTS_LEXER = Symbol("wants the lexer");

/** Reads and parses one post; the record holds its body. */
function parseOne(
  contentDir: string,
  realRoot: string,
  rel: string,
  realDirs: Map<string, string>,
): PostRecord | Problem[] | typeof WANTS_LEXER {
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
  const excerpt = rest.meta.excerpt ?? scannedExcerpt(body) ?? lexer?.(body);
  if (excerpt === undefined) return WANTS_LEXER;
  // Strings cut from the file's text (slugs, dates, links) are views that keep
  // the whole text alive, body included, after the body is let go: the record
  // holds copies instead.
  const record: PostRecord = structuredClone({ ...rest, excerpt, fingerprint: opened.fingerprint, sha256: opened.sha256 });
  record.body = body;
  return record;
}

/**
 * Parses the given files (in this thread); what a parse worker runs on its
 * share. `take` gets each record as it is parsed, so that what it lets go
 * (a body past the budget, a record spooled) is never held for all at once.
 */
export async function parseFiles<T = PostRecord>(
  contentDir: string,
  realRoot: string,
  rels: readonly string[],
  take: (record: PostRecord) => T = (record) => record as T,
): Promise<(T | Problem[])[]> {
  const realDirs = new Map<string, string>();
  const results: (T | Problem[])[] = [];
  for (const rel of rels) {
    let result = parseOne(contentDir, realRoot, rel, realDirs);
    if (result === WANTS_LEXER) {
      // Read again once the lexer is here: the few posts that need it cost a second read, the others no load.
      lexer ??= (await import("../render/excerpt-lexer.js")).deriveExcerpt;
      result = parseOne(contentDir, realRoot, rel, realDirs);
    }
    if (result === WANTS_LEXER) throw new Error(`${rel}: no excerpt with the lexer loaded`);
    results.push(Array.isArray(result) ? result : take(result));
  }
  return results;
}
