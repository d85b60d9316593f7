/**
 * A generation's file entries (hash and identity of each tree file), as the
 * build state holds them: read as they are asked for, one file, one
 * organization or one part of it (api-paths.ts `OrgPart`) by key range, or the
 * whole table. A rebuild that changes one post of a large organization reads
 * the entries of the files it writes, never the other posts' entries.
 *
 * The next generation's entries are the live ones with what its build placed
 * and removed (`GenerationFiles`): the state records only that difference.
 */
import Database from "better-sqlite3";
import { orgInFolder, pageRanges, partOfFile, partRanges, type OrgPart } from "../api-paths.js";
import type { FileEntry } from "./build-state.js";

export interface FileTable {
  get(rel: string): FileEntry | undefined;
  /** The entries of an organization's files, or of one part of them. */
  of(orgId: string, part?: OrgPart): ReadonlyMap<string, FileEntry>;
  /** Every entry. */
  all(): ReadonlyMap<string, FileEntry>;
}

/** The live generation's entries, as the state holds them. */
export interface StoredFiles extends FileTable {
  /** How many files an organization has, or one part of it. */
  count(orgId: string, part?: OrgPart): number;
  /**
   * The entries of an organization's page files (`…/contents/page/{n}` and its
   * categories'), read apart from the rest of its posts part: a rebuild looks
   * up every page, and a hundred thousand posts have a few thousand pages.
   */
  pagesOf(orgId: string): ReadonlyMap<string, FileEntry>;
  /** Calls `visit` with every file's path, read row by row: the entries are not all held. */
  eachRel(visit: (rel: string) => void): void;
}

const inRanges = (rel: string, ranges: readonly [string, string][]) => ranges.some(([from, to]) => rel >= from && rel < to);

/** The same hash and identity. */
export const sameEntry = (a: FileEntry, b: FileEntry | undefined): boolean => b !== undefined && a.every((value, i) => value === b[i]);

/** Files looked up one by one in a part before the whole part is read at once (one query each costs more beyond). */
const LOOKUPS_BEFORE_PART = 64;

type EntryRow = [rel: string, sha256: string, ino: number, mtimeMs: number, size: number];

/** Reads a state file through a read-only connection of its own, closed once `read` returns. */
export function withDb<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

function entriesIn(file: string, ranges: readonly [string, string][]): Map<string, FileEntry> {
  return withDb(file, (db) => {
    const entries = new Map<string, FileEntry>();
    const select = db.prepare("SELECT * FROM files WHERE rel >= ? AND rel < ?").raw();
    for (const range of ranges) {
      for (const [rel, sha, ino, mtime, size] of select.iterate(...range) as Iterable<EntryRow>) entries.set(rel, [sha, ino, mtime, size]);
    }
    return entries;
  });
}

/** The entries of the `files` table of a state file, read as they are asked for. */
export function storedFiles(file: string): StoredFiles {
  let whole: Map<string, FileEntry> | undefined;
  const parts = new Map<string, Map<string, FileEntry>>();
  const looked = new Map<string, FileEntry | undefined>();
  const lookups = new Map<string, number>();
  const keyOf = (orgId: string, part: OrgPart) => `${part}\u0000${orgId}`;
  const pages = new Map<string, Map<string, FileEntry>>();
  // Asked of every file looked up: made once per organization.
  const rangesOfPages = new Map<string, [string, string][]>();
  const pageRangesOf = (orgId: string) => {
    let ranges = rangesOfPages.get(orgId);
    if (!ranges) rangesOfPages.set(orgId, (ranges = pageRanges(orgId)));
    return ranges;
  };
  const pagesOf = (orgId: string): Map<string, FileEntry> => {
    let entries = pages.get(orgId);
    if (!entries) {
      const ranges = pageRangesOf(orgId);
      entries = whole ? new Map([...whole].filter(([rel]) => inRanges(rel, ranges))) : entriesIn(file, ranges);
      pages.set(orgId, entries);
    }
    return entries;
  };
  const partOf = (orgId: string, part: OrgPart): Map<string, FileEntry> => {
    const key = keyOf(orgId, part);
    let entries = parts.get(key);
    if (!entries) {
      const ranges = partRanges(orgId, part);
      entries = whole ? new Map([...whole].filter(([rel]) => inRanges(rel, ranges))) : entriesIn(file, ranges);
      parts.set(key, entries);
    }
    return entries;
  };
  return {
    get(rel) {
      if (whole) return whole.get(rel);
      const orgId = orgInFolder(rel);
      const part = partOfFile(rel);
      const key = keyOf(orgId, part);
      const loaded = parts.get(key);
      if (loaded) return loaded.get(rel);
      if (inRanges(rel, pageRangesOf(orgId))) return pagesOf(orgId).get(rel);
      if (looked.has(rel)) return looked.get(rel);
      const n = (lookups.get(key) ?? 0) + 1;
      lookups.set(key, n);
      if (n > LOOKUPS_BEFORE_PART) return partOf(orgId, part).get(rel);
      const row = withDb(file, (db) => db.prepare("SELECT * FROM files WHERE rel = ?").raw().get(rel) as EntryRow | undefined);
      const entry: FileEntry | undefined = row && [row[1], row[2], row[3], row[4]];
      looked.set(rel, entry);
      return entry;
    },
    of: (orgId, part) => (part ? partOf(orgId, part) : new Map([...partOf(orgId, "rows"), ...partOf(orgId, "posts")])),
    count(orgId, part) {
      const ranges = partRanges(orgId, part);
      if (whole) return [...whole.keys()].filter((rel) => inRanges(rel, ranges)).length;
      return withDb(file, (db) => {
        const count = db.prepare("SELECT count(*) FROM files WHERE rel >= ? AND rel < ?").pluck();
        return ranges.reduce((n, range) => n + (count.get(...range) as number), 0);
      });
    },
    all: () => (whole ??= entriesIn(file, [["", "\uffff"]])),
    pagesOf,
    eachRel(visit) {
      if (whole) {
        for (const rel of whole.keys()) visit(rel);
        return;
      }
      withDb(file, (db) => {
        for (const rel of db.prepare("SELECT rel FROM files").pluck().iterate() as Iterable<string>) visit(rel);
      });
    },
  };
}

/** A table of the given entries, all in memory. */
export function filesInMemory(entries: ReadonlyMap<string, FileEntry>): StoredFiles {
  const within = (ranges: readonly [string, string][]) => new Map([...entries].filter(([rel]) => inRanges(rel, ranges)));
  return {
    get: (rel) => entries.get(rel),
    of: (orgId, part) => within(partRanges(orgId, part)),
    count: (orgId, part) => within(partRanges(orgId, part)).size,
    all: () => entries,
    pagesOf: (orgId) => within(pageRanges(orgId)),
    eachRel: (visit) => {
      for (const rel of entries.keys()) visit(rel);
    },
  };
}

/**
 * A generation's files as the build that made it knows them: the live
 * generation's entries (when it was made as their copy) with what it placed
 * and removed.
 */
export interface GenerationFiles {
  /** The entries it was made a copy of; null when it was made from nothing (every file placed). */
  base: FileTable | null;
  placed: ReadonlyMap<string, FileEntry>;
  removed: ReadonlySet<string>;
}

/** The entries of a generation, looked up through its base. */
export function generationFiles(files: GenerationFiles): FileTable {
  const { base, placed, removed } = files;
  const get = (rel: string) => (removed.has(rel) ? undefined : (placed.get(rel) ?? base?.get(rel)));
  const merged = (from: ReadonlyMap<string, FileEntry>, keep: (rel: string) => boolean) => {
    const entries = new Map([...from].filter(([rel]) => !removed.has(rel)));
    for (const [rel, entry] of placed) if (keep(rel)) entries.set(rel, entry);
    return entries;
  };
  const inOrg = (orgId: string, part?: OrgPart) => (rel: string) => orgInFolder(rel) === orgId && (part === undefined || partOfFile(rel) === part);
  return {
    get,
    of: (orgId, part) => merged(base?.of(orgId, part) ?? new Map(), inOrg(orgId, part)),
    all: () => merged(base?.all() ?? new Map(), () => true),
  };
}
