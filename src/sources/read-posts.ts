/**
 * Finds (list-posts.ts) and parses the markdown posts: `<content>/<orgId>/**\/*.md`.
 * Every file is checked to lie inside the content folder once symlinks are
 * resolved, and decoded as strict UTF-8.
 *
 * Incremental builds hand in what the previous build recorded: a file whose
 * identity (size, mtime, ctime, inode) or bytes are unchanged is not parsed
 * again, and is planned from its head alone unless it is to be rendered again;
 * an organization whose posts are all as they were, and kept, needs nothing. Bodies
 * are kept in memory up to a budget and read again when rendering needs them,
 * so a 100k-post organization never holds every body at once.
 */
import { realpathSync, statSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { orNullOn } from "../errno.js";
import { UsageError, type Problem, type SourceWarning } from "../errors.js";
import { EDGE_FILE_LIMIT, postFileWarning } from "../model/edge-file-limit.js";
import type { Post, PostRecord, UnchangedPost } from "../model/snapshot.js";
import { splitFrontMatter } from "./split-front-matter.js";
import { listPosts } from "./list-posts.js";
import { readText, type Opened } from "./read-text.js";
import { hashInParallel, parseInParallel } from "./parse-pool.js";
import { listingOf, orgOfPost, pairsDigest, type PostsListing } from "./posts-listing.js";

/** Bodies kept in memory, in UTF-16 code units (about twice as many bytes). */
export const DEFAULT_BODY_BUDGET = 64 * 1024 * 1024;

export interface PostsRead {
  /** Posts per organization folder name, but for the organizations whose posts are kept. */
  byOrg: Map<string, Post[]>;
  /** Organizations whose posts are kept as they are (PreviousPosts.kept): none of them was parsed. */
  kept: Set<string>;
  /** Each organization's posts as read (kept organizations too), when a build reads them: what the state records for the next build's walk. */
  listings: Map<string, PostsListing>;
  /** Unchanged posts (of kept organizations, or planned from their head) whose file was copied anew with the same bytes, and their new fingerprint. */
  refreshed: [file: string, fingerprint: string][];
  problems: Problem[];
  /** What a build accepts but reports: a link with another name than `*.md` that leads nowhere, a post too large for the edge. */
  warnings: SourceWarning[];
  /** `*.md` entries looked at, those refused before parsing included. */
  files: number;
  /** Files read and parsed, and files whose bytes were those the previous build parsed. */
  parsed: number;
  reused: number;
  /** Threads the parsing ran on (CDSNAP_PARSE_THREADS). */
  threads: number;
}

/** What the previous build recorded of the posts, read as it is needed. */
export interface PreviousPosts {
  /** The fingerprint and SHA-256 the stored record of a file was made from. */
  identity: (rel: string) => { fingerprint: string; sha256: string } | undefined;
  /** An organization's posts as the previous build recorded them, as digests: when its walk gives the same fingerprints, no stored identity is read. */
  listing?: (orgId: string) => PostsListing | undefined;
  /** An organization's posts as the previous build left them, by file. */
  heads: (orgId: string) => ReadonlyMap<string, UnchangedPost>;
  /** A post's stored record. */
  record: (rel: string) => Omit<PostRecord, "body"> | undefined;
  /** Whether an unchanged post is rendered again (then its record is read instead of planning it from its head). */
  needsRecord?: (orgId: string, post: UnchangedPost) => boolean;
  /**
   * Called for each of `candidates` whose every post has the bytes of its
   * stored record, with the digest of those bytes (PostsListing.content):
   * whether the organization's posts are kept as the last build left them.
   * Then they are neither read nor parsed, and it is left out of `byOrg`.
   */
  kept?: (orgId: string, content: string) => boolean;
  /** The organizations whose posts may be kept (those with a database row). */
  candidates?: readonly string[];
}

export interface ReadPostsOptions {
  /** What the previous build recorded: a post is not parsed again while its file has the same bytes. */
  previous?: PreviousPosts;
  bodyBudget?: number;
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
  // A link that leads nowhere, or round in a loop, leads to no folder either.
  const realRoot = await orNullOn(realpath(contentDir), "ENOENT", "ENOTDIR", "ELOOP");
  if (realRoot === null) throw new UsageError(`content folder ${contentDir} does not exist`);
  if (!statSync(realRoot).isDirectory()) throw new UsageError(`content folder ${contentDir} is a file, not a folder; pass the folder that holds the organizations' folders`);
  const listing = listPosts(contentDir, realRoot, orgIds);
  const problems: Problem[] = [...listing.problems];
  const byOrg = new Map<string, Post[]>();
  for (const id of orgIds ?? []) byOrg.set(id, []);
  const listed = listing.files;

  let reused = 0;
  const previous = options.previous;
  const orgs = listed.map((entry) => orgOfPost(entry.rel));
  const orgOf = (i: number) => orgs[i]!;
  const filesOf = new Map<string, number[]>();
  listed.forEach((_, i) => {
    const list = filesOf.get(orgOf(i));
    if (list) list.push(i);
    else filesOf.set(orgOf(i), [i]);
  });
  // Organizations whose every file has the fingerprint recorded: none of their stored identities is read.
  const asRecorded = new Set<string>();
  for (const orgId of new Set([...(previous?.candidates ?? []), ...filesOf.keys()])) {
    const recorded = previous?.listing?.(orgId);
    const files = filesOf.get(orgId) ?? [];
    if (recorded && recorded.fingerprints === pairsDigest(files.map((i) => [listed[i]!.rel, listed[i]!.fingerprint] as const))) asRecorded.add(orgId);
  }
  // The fingerprint each file has now, when its bytes are those of its stored record.
  const toHash: number[] = [];
  const same: (string | undefined)[] = listed.map((entry, i) => {
    if (asRecorded.has(orgOf(i))) return entry.fingerprint;
    const stored = previous?.identity(entry.rel);
    if (!stored) return undefined;
    if (stored.fingerprint === entry.fingerprint) return entry.fingerprint;
    toHash.push(i);
    return undefined;
  });
  // A post is its bytes: a file copied anew (a fresh checkout, an editor's
  // save of the same text) is read and hashed, and parsed only if they differ.
  const hashed = await hashInParallel(contentDir, realRoot, toHash.map((i) => listed[i]!.rel));
  toHash.forEach((i, n) => {
    const now = hashed[n];
    if (now?.sha256 === previous!.identity(listed[i]!.rel)!.sha256) same[i] = now.fingerprint;
  });
  const kept = new Set<string>();
  const listings = new Map<string, PostsListing>();
  const refreshed: [string, string][] = [];
  for (const orgId of previous?.kept ? (previous.candidates ?? []) : []) {
    const files = filesOf.get(orgId) ?? [];
    if (!files.every((i) => same[i] !== undefined)) continue;
    const listing = asRecorded.has(orgId)
      ? previous!.listing!(orgId)!
      : {
          fingerprints: pairsDigest(files.map((i) => [listed[i]!.rel, same[i]!] as const)),
          content: pairsDigest(files.map((i) => [listed[i]!.rel, previous!.identity(listed[i]!.rel)!.sha256] as const)),
        };
    if (!previous!.kept!(orgId, listing.content)) continue;
    kept.add(orgId);
    listings.set(orgId, listing);
    reused += files.length;
    if (asRecorded.has(orgId)) continue;
    for (const i of files) if (same[i] !== previous!.identity(listed[i]!.rel)!.fingerprint) refreshed.push([listed[i]!.rel, same[i]!]);
  }
  for (const orgId of kept) byOrg.delete(orgId);
  const results: (Post | Problem[] | null | undefined)[] = listed.map((entry, i) => {
    if (kept.has(orgOf(i))) return null;
    const fingerprint = same[i];
    const head = fingerprint === undefined ? undefined : previous!.heads(orgOf(i)).get(entry.rel);
    if (!head) return undefined;
    if (!previous!.needsRecord?.(orgOf(i), head)) {
      reused++;
      if (fingerprint === head.fingerprint) return head;
      refreshed.push([entry.rel, fingerprint!]);
      return { ...head, fingerprint: fingerprint! };
    }
    const record = previous!.record(entry.rel);
    if (!record) return undefined;
    reused++;
    return { ...record, fingerprint: fingerprint! };
  });
  const toParse = results.flatMap((result, i) => (result === undefined ? [i] : []));
  const rels = toParse.map((i) => listed[i]!.rel);
  let held = 0;
  const budget = options.bodyBudget ?? DEFAULT_BODY_BUDGET;
  // Applied as each post is parsed, so no more bodies than the budget are ever held at once.
  const keepWithinBudget = (record: PostRecord) => {
    if (record.body === undefined) return;
    if (held + record.body.length <= budget) held += record.body.length;
    else delete record.body;
  };
  const { results: fresh, threads } = await parseInParallel(contentDir, realRoot, rels, keepWithinBudget);
  const parsed = rels.length;
  fresh.forEach((result, n) => (results[toParse[n]!] = result));
  results.forEach((result, i) => {
    if (result === undefined || result === null) return;
    if (Array.isArray(result)) {
      problems.push(...result);
      return;
    }
    const orgId = orgOf(i);
    const list = byOrg.get(orgId) ?? [];
    list.push(result);
    byOrg.set(orgId, list);
  });
  // Only a build records them (it hands in what it recorded before, if only nothing). An
  // organization with no folder has a listing too: none of its posts is recorded.
  for (const orgId of previous ? new Set([...(previous.candidates ?? []), ...byOrg.keys()]) : []) {
    if (!kept.has(orgId)) listings.set(orgId, listingOf(byOrg.get(orgId) ?? []));
  }
  const warnings = [...listing.warnings];
  for (const file of listed) if (file.size > EDGE_FILE_LIMIT) warnings.push(postFileWarning(file.rel, file.size));
  return { byOrg, kept, listings, refreshed, problems, warnings, files: listing.found, parsed, reused, threads };
}

/**
 * The body of a post whose body was let go. The file must still be the one
 * that was validated: a file edited while the build runs fails the build
 * rather than publishing what was never checked.
 */
export function loadBody(contentDir: string, post: PostRecord): string {
  if (post.body !== undefined) return post.body;
  let opened: Opened;
  try {
    opened = readText(realpathSync(contentDir), contentDir, post.file, new Map());
  } catch (error) {
    throw new UsageError(`${post.file} could not be read again while building: ${(error as Error).message}`);
  }
  const parts = opened.fingerprint === post.fingerprint ? splitFrontMatter(opened.text.replace(/^\uFEFF/, "")) : null;
  if (parts === null || typeof parts === "string") {
    throw new UsageError(`${post.file} changed while the build ran; run the build again`);
  }
  return parts.body;
}
