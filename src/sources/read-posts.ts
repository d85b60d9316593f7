/**
 * Finds (list-posts.ts) and parses the markdown posts: `<content>/<orgId>/**\/*.md`.
 * Every file is checked to lie inside the content folder once symlinks are
 * resolved, and decoded as strict UTF-8.
 *
 * Incremental builds hand in what the previous build recorded: a file whose
 * identity (size, mtime, ctime, inode) or bytes are unchanged is not parsed
 * again, and is planned from its head alone unless it is to be rendered again;
 * an organization whose posts are all as they were, and kept, needs nothing;
 * one whose edited posts all keep their places needs their heads alone. Bodies
 * are kept in memory up to a budget and read again when rendering needs them,
 * so a 100k-post organization never holds every body at once.
 */
import { realpathSync, statSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { orNullOn } from "../errno.js";
import { UsageError, type Problem, type SourceWarning } from "../errors.js";
import { EDGE_FILE_LIMIT, postFileWarning } from "../model/edge-file-limit.js";
import { recordOf, spoolFormOf, type FreshPost, type Post, type PostRecord, type RecordSpool, type UnchangedPost } from "../model/snapshot.js";
import { splitFrontMatter } from "./split-front-matter.js";
import { walkPosts, type PostFile, type PostListing } from "./list-posts.js";
import { readText, type Identity, type Opened } from "./read-text.js";
import { hashingQueue, parseInParallel, type Taking } from "./parse-pool.js";
import { folderListing, listingOf, listingOfFolders, orgOfPost, pairsDigest, type PostsListing } from "./posts-listing.js";

/** Bodies kept in memory, in UTF-16 code units (about twice as many bytes). */
export const DEFAULT_BODY_BUDGET = 64 * 1024 * 1024;

export interface PostsRead {
  /** Posts per organization folder name, but for the organizations whose posts are kept. */
  byOrg: Map<string, Post[]>;
  /** Organizations whose posts are kept as they are (PreviousPosts.kept): none of them was parsed. */
  kept: Set<string>;
  /** Each organization's posts as read (kept organizations too), when a build reads them: what the state records for the next build's walk. */
  listings: Map<string, PostsListing>;
  /**
   * Organizations whose posts were edited in place (PreviousPosts.inPlace):
   * `byOrg` holds only the edited ones, parsed; the others are as the last
   * build left them, and none of their stored heads was read.
   */
  inPlace: Set<string>;
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
  /** An organization's posts as the previous build recorded them, as digests folder by folder: of a folder whose walk gives the same fingerprints, no stored identity is read. */
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
  /** Some of an organization's posts as the previous build left them, by file. */
  headsAt?: (orgId: string, rels: readonly string[]) => ReadonlyMap<string, UnchangedPost>;
  /**
   * Called for an organization whose files are those the previous build
   * recorded, some with other bytes, each edit parsed: whether every edited
   * post keeps its place (its id, slug, status, date, category and list item
   * as they were). Then the others are taken as they are, no stored head read,
   * and only the edited ones are in `byOrg`.
   */
  inPlace?: (orgId: string, edits: readonly PostEdit[]) => boolean;
}

/** A post whose bytes changed: as the previous build left it, and as it is now. */
export interface PostEdit {
  before: UnchangedPost;
  after: PostRecord;
}

export interface ReadPostsOptions {
  /** What the previous build recorded: a post is not parsed again while its file has the same bytes. */
  previous?: PreviousPosts;
  bodyBudget?: number;
  /** Where each record parsed or read back whole waits (a build's): then a post read is held as its head. */
  spool?: RecordSpool;
}

/** How many posts the previous build recorded of the organizations that may be read. */
function postsRecorded(previous: PreviousPosts | undefined): number {
  let posts = 0;
  for (const orgId of previous?.candidates ?? []) for (const folder of previous!.listing?.(orgId)?.folders.values() ?? []) posts += folder.count;
  return posts;
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
  const previous = options.previous;
  // Folders whose every file has the fingerprint recorded: none of their stored identities is read.
  const folderAsRecorded = new Set<string>();
  // A post is its bytes: a file copied anew (a fresh checkout, an editor's save of the same text) is
  // read and hashed, and parsed only if they differ. Handed to the hashing as each folder is walked.
  const hashing = hashingQueue(contentDir, realRoot, postsRecorded(previous));
  const handed: PostFile[] = [];
  const folderRead = (folder: string, files: readonly PostFile[]) => {
    if (previous === undefined) return;
    const recorded = previous.listing?.(orgOfPost(files[0]!.rel))?.folders.get(folder);
    if (recorded?.fingerprints === pairsDigest(files.map((file) => [file.rel, file.fingerprint] as const))) {
      folderAsRecorded.add(folder);
      return;
    }
    const copied = files.filter(({ rel, fingerprint }) => (previous.identity(rel)?.fingerprint ?? fingerprint) !== fingerprint);
    for (const file of copied) handed.push(file);
    hashing.add(copied.map((file) => file.rel));
  };
  let listing: PostListing;
  let identities: (Identity | null)[];
  try {
    const walk = walkPosts(contentDir, realRoot, orgIds, folderRead);
    let step = walk.next();
    for (; !step.done; step = walk.next()) await hashing.pause();
    listing = step.value;
    identities = await hashing.identities();
  } catch (error) {
    // A worker left running would keep the process alive after the build has failed.
    await hashing.abandon();
    throw error;
  }
  // The files handed to the hashing as they were walked (those of the same tests as `toHash` below), each with its identity now.
  const hashed = new Map(handed.map((file, n) => [file, identities[n]]));
  const problems: Problem[] = [...listing.problems];
  const byOrg = new Map<string, Post[]>();
  for (const id of orgIds ?? []) byOrg.set(id, []);
  const listed = listing.files;

  let reused = 0;
  // Each post's organization and folder, as strings its folder's posts share (not a slice of each path).
  const orgOfFolder = new Map<string, string>();
  const orgs = listed.map((entry) => {
    let orgId = orgOfFolder.get(entry.folder);
    if (orgId === undefined) orgOfFolder.set(entry.folder, (orgId = orgOfPost(entry.rel)));
    return orgId;
  });
  const orgOf = (i: number) => orgs[i]!;
  const filesOf = new Map<string, number[]>();
  // Each organization's files by folder, in path order.
  const foldersOf = new Map<string, Map<string, number[]>>();
  const folders = listed.map((entry) => entry.folder);
  listed.forEach((_, i) => {
    const list = filesOf.get(orgOf(i));
    if (list) list.push(i);
    else filesOf.set(orgOf(i), [i]);
    let byFolder = foldersOf.get(orgOf(i));
    if (!byFolder) foldersOf.set(orgOf(i), (byFolder = new Map()));
    const inFolder = byFolder.get(folders[i]!);
    if (inFolder) inFolder.push(i);
    else byFolder.set(folders[i]!, [i]);
  });
  const recordedOf = (orgId: string) => previous?.listing?.(orgId);
  /** Whether every folder the previous build recorded of an organization is still there (a post in it may be gone). */
  const noFolderGone = (orgId: string, recorded: PostsListing) => [...recorded.folders.keys()].every((folder) => foldersOf.get(orgId)?.has(folder));
  // The organizations whose every folder is as recorded, none gone.
  const asRecorded = new Set<string>();
  for (const orgId of new Set([...(previous?.candidates ?? []), ...filesOf.keys()])) {
    const recorded = recordedOf(orgId);
    const folders = foldersOf.get(orgId)?.keys() ?? [];
    if (recorded !== undefined && noFolderGone(orgId, recorded) && [...folders].every((folder) => folderAsRecorded.has(folder))) asRecorded.add(orgId);
  }
  /** An organization's listing now, each folder's from `fileNow` (its fingerprint and SHA-256) unless as recorded. */
  const listingNow = (orgId: string, fileNow: (i: number) => { fingerprint: string; sha256: string }): PostsListing => {
    const recorded = recordedOf(orgId);
    const byFolder = [...(foldersOf.get(orgId) ?? [])].map(([folder, files]) => {
      const known = folderAsRecorded.has(folder) ? recorded!.folders.get(folder)! : folderListing(files.map((i) => ({ file: listed[i]!.rel, ...fileNow(i) })));
      return [folder, known] as const;
    });
    return listingOfFolders(new Map(byFolder));
  };
  // Each file's stored identity, read once: it is asked for at several steps below.
  const stored = new Array<{ fingerprint: string; sha256: string } | null | undefined>(listed.length);
  const storedOf = (i: number) => (stored[i] === undefined ? (stored[i] = previous?.identity(listed[i]!.rel) ?? null) : stored[i]) ?? undefined;
  // The fingerprint each file has now, when its bytes are those of its stored record.
  const toHash: number[] = [];
  const same: (string | undefined)[] = listed.map((entry, i) => {
    if (folderAsRecorded.has(folders[i]!)) return entry.fingerprint;
    const known = storedOf(i);
    if (!known) return undefined;
    if (known.fingerprint === entry.fingerprint) return entry.fingerprint;
    toHash.push(i);
    return undefined;
  });
  for (const i of toHash) {
    const now = hashed.get(listed[i]!);
    if (now?.sha256 === storedOf(i)!.sha256) same[i] = now.fingerprint;
  }
  const kept = new Set<string>();
  const listings = new Map<string, PostsListing>();
  const refreshed: [string, string][] = [];
  /** Records the new fingerprint of an unchanged post whose file was copied anew (its folder not as recorded). */
  const refreshIfCopied = (i: number) => {
    if (!folderAsRecorded.has(folders[i]!) && same[i] !== storedOf(i)!.fingerprint) refreshed.push([listed[i]!.rel, same[i]!]);
  };
  for (const orgId of previous?.kept ? (previous.candidates ?? []) : []) {
    const files = filesOf.get(orgId) ?? [];
    if (!files.every((i) => same[i] !== undefined)) continue;
    const listing = asRecorded.has(orgId) ? recordedOf(orgId)! : listingNow(orgId, (i) => ({ fingerprint: same[i]!, sha256: storedOf(i)!.sha256 }));
    if (!previous!.kept!(orgId, listing.content)) continue;
    kept.add(orgId);
    listings.set(orgId, listing);
    reused += files.length;
    files.forEach(refreshIfCopied);
  }
  for (const orgId of kept) byOrg.delete(orgId);
  // Organizations that may have been edited in place: every file recorded, none gone, some with other bytes.
  // Their unchanged posts are settled once the edited ones are parsed.
  const mayBeInPlace = new Set<string>();
  for (const orgId of previous?.inPlace ? (previous.candidates ?? []) : []) {
    const recorded = recordedOf(orgId);
    const byFolder = foldersOf.get(orgId);
    if (kept.has(orgId) || !recorded || !byFolder || !noFolderGone(orgId, recorded)) continue;
    // A folder not as recorded holds as many posts as recorded, each with a stored identity: none added, none gone.
    const allRecorded = [...byFolder].every(
      ([folder, files]) => folderAsRecorded.has(folder) || (recorded.folders.get(folder)?.count === files.length && files.every((i) => storedOf(i) !== undefined)),
    );
    if (allRecorded && filesOf.get(orgId)!.some((i) => same[i] === undefined)) mayBeInPlace.add(orgId);
  }
  // A record parsed or read back whole waits in the build's spool, if there is one: the build holds its head.
  const spooled = (record: PostRecord): FreshPost => (options.spool ? options.spool.keep(spoolFormOf(record), record.body) : record);
  /** An unchanged post as the build takes it; undefined when it must be parsed. */
  const unchanged = (i: number): Post | undefined => {
    const fingerprint = same[i]!;
    const rel = listed[i]!.rel;
    const head = previous!.heads(orgOf(i)).get(rel);
    if (!head) return undefined;
    if (!previous!.needsRecord?.(orgOf(i), head)) {
      reused++;
      if (fingerprint === head.fingerprint) return head;
      refreshed.push([rel, fingerprint]);
      return { ...head, fingerprint };
    }
    const record = previous!.record(rel);
    if (!record) return undefined;
    reused++;
    return spooled({ ...record, fingerprint });
  };
  const results: (Post | Problem[] | null | undefined)[] = listed.map((_, i) => {
    if (kept.has(orgOf(i))) return null;
    if (same[i] === undefined || mayBeInPlace.has(orgOf(i))) return undefined;
    return unchanged(i);
  });
  let held = 0;
  const budget = options.bodyBudget ?? DEFAULT_BODY_BUDGET;
  // Applied as each post is parsed, so no more bodies than the budget are ever held at once.
  // Once a body is refused, the parse workers are told to send none.
  let refused = false;
  const withinBudget = (body: string | undefined): boolean => {
    if (body === undefined) return false;
    if (held + body.length > budget) {
      refused = true;
      return false;
    }
    held += body.length;
    return true;
  };
  const spool = options.spool;
  const taking: Taking<FreshPost> = spool
    ? { form: "spooled", take: (parsed) => spool.keep(parsed, withinBudget(parsed.body) ? parsed.body : undefined), bodies: () => !refused }
    : {
        form: "record",
        take: (record) => {
          if (!withinBudget(record.body)) delete record.body;
          return record;
        },
      };
  const parse = async (indices: readonly number[]) => {
    const rels = indices.map((i) => listed[i]!.rel);
    const { results: fresh, threads } = await parseInParallel(contentDir, realRoot, rels, taking);
    fresh.forEach((result, n) => (results[indices[n]!] = result));
    return { parsed: rels.length, threads };
  };
  const first = await parse(results.flatMap((result, i) => (result === undefined && (same[i] === undefined || !mayBeInPlace.has(orgOf(i))) ? [i] : [])));
  let parsed = first.parsed;
  const inPlace = new Set<string>();
  const settleLater: number[] = [];
  /** Whether the edited posts (each parsed without a problem) keep their places, their heads read for the question. */
  const keepPlaces = (orgId: string, edited: readonly number[]): boolean => {
    const after = edited.map((i) => results[i]);
    if (!after.every((post): post is FreshPost => post !== undefined && post !== null && !Array.isArray(post))) return false;
    const before = previous!.headsAt?.(orgId, edited.map((i) => listed[i]!.rel)) ?? new Map<string, UnchangedPost>();
    const edits = after.flatMap((post) => {
      const head = before.get(post.file);
      return head ? [{ before: head, after: recordOf(post) }] : [];
    });
    return edits.length === edited.length && previous!.inPlace!(orgId, edits);
  };
  for (const orgId of mayBeInPlace) {
    const files = filesOf.get(orgId)!;
    if (keepPlaces(orgId, files.filter((i) => same[i] === undefined))) {
      inPlace.add(orgId);
      for (const i of files) {
        if (same[i] === undefined) continue;
        results[i] = null;
        reused++;
        refreshIfCopied(i);
      }
      continue;
    }
    for (const i of files) if (same[i] !== undefined && (results[i] = unchanged(i)) === undefined) settleLater.push(i);
  }
  // A head without its record (a state written by an interrupted build): that post is parsed after all.
  if (settleLater.length > 0) parsed += (await parse(settleLater)).parsed;
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
    if (kept.has(orgId)) continue;
    if (!inPlace.has(orgId)) {
      listings.set(orgId, listingOf(byOrg.get(orgId) ?? []));
      continue;
    }
    // Edited in place: the unchanged posts' bytes are the recorded ones, the edited ones' those just parsed.
    listings.set(orgId, listingNow(orgId, (i) => (same[i] === undefined ? (results[i] as FreshPost) : { fingerprint: same[i]!, sha256: storedOf(i)!.sha256 })));
  }
  const warnings = [...listing.warnings];
  for (const file of listed) if (file.size > EDGE_FILE_LIMIT) warnings.push(postFileWarning(file.rel, file.size));
  return { byOrg, kept, inPlace, listings, refreshed, problems, warnings, files: listing.found, parsed, reused, threads: first.threads };
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
