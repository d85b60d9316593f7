/**
 * What the live generation was built from and holds, in one SQLite file beside
 * the generations (`.site.cdsnap/state.sqlite`, never in a tree): the SHA-256
 * and identity of every file, each organization's page membership hash, the
 * record of every post and its head (what planning needs, and its list item),
 * and the facts the audit established per file, with the id of the generation
 * they describe.
 *
 * A build reads only what it needs: at first the small rows (meta, each
 * organization's digest, each post's fingerprint and hash); an organization's
 * post heads only when its posts are planned, a post's record only when it is
 * rendered again without a change of its own (a category renamed, a scheduled
 * post due), the file rows and the changes to replay only when a generation
 * is made. It writes only the rows that differ, in one transaction that commits after the swap: a build that fails,
 * or is killed before the commit, leaves the rows as they were. Rows that name
 * another generation than the live one (killed between swap and commit), a
 * damaged file or an older format read as empty: the build then re-renders and
 * re-hashes, which costs time and never changes a byte of the tree.
 */
import Database from "better-sqlite3";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import type { OrgExpectation } from "../audit/audit-inputs.js";
import type { FileFacts } from "../audit/tree-rules.js";
import { orgFolderOf, orgInFolder } from "../api-paths.js";
import { CdsnapError } from "../errors.js";
import { headFieldsOf, recordFromJson, recordJsonOf, type FreshPost, type PostHead, type PostRecord, type UnchangedPost } from "../model/snapshot.js";
import type { OrgCounts } from "../render/render-org.js";
import { folderOfPost, listingOfFolders, orgOfPost, type FolderListing, type PostsListing } from "../sources/posts-listing.js";
import { filesInMemory, generationFiles, sameEntry, storedFiles, withDb, type FileTable, type GenerationFiles, type StoredFiles } from "./file-table.js";
import type { Generation, TreeStore } from "./tree-store.js";

/** A post a build parsed or read back whole, and what it made of it: the rows it records. */
export interface BuiltPost {
  post: FreshPost;
  built: UnchangedPost["built"];
}

/** A stored post's identity: the fingerprint and SHA-256 of its source file. */
export interface StoredPost {
  fingerprint: string;
  sha256: string;
}

/** A tree file over the edge's size limit, as a build found it (the warning is said again while the organization is unchanged). */
export interface OversizeFile {
  rel: string;
  bytes: number;
  post?: string;
}

/**
 * An organization as its last build planned it. While the digests of its
 * inputs are the same and no post is due, nothing of it can change: a build
 * then keeps its files and records as they are and reports these figures.
 * While one of them is, that part of its tree is kept (api-paths.ts `OrgPart`).
 */
export interface StoredOrg {
  /** Of the code and the organization's rows: what its `rows` part is made from. */
  rowsDigest: string;
  /** Of the code, its categories' rows and its posts' files and bytes: what its `posts` part is made from. */
  postsDigest: string;
  /** The code that parsed its post records: other code parses every post again. */
  code: string;
  /** Its report figures, without the files written, kept and removed. */
  counts: OrgCounts;
  /** Files it has in the tree. */
  files: number;
  nextPublishAt: string | null;
  oversize: OversizeFile[];
}

/** A tree file: the SHA-256 of its bytes, and the identity (inode, mtime, size) they were hashed at. */
export type FileEntry = [sha256: string, ino: number, mtimeMs: number, size: number];

/** The audit's facts of a file, valid for the bytes with that SHA-256. */
export interface AuditedFile {
  sha256: string;
  facts: FileFacts;
}

/** Which stored secrets an audit searched for, kept without anything a secret could be recovered from. */
export interface SecretsKey {
  /** Salts the key; kept across builds so an unchanged set of secrets keeps its key. */
  salt: string;
  /** A salted scrypt of every stored secret: the recorded facts hold only while it is the same. */
  secretsKey: string;
}

export interface AuditState extends SecretsKey {
  /** The facts of every file the audit looked at. */
  files: Map<string, AuditedFile>;
  /** What the sources published, per organization audited against them: an audit by difference compares with it. */
  expected: Map<string, OrgExpectation>;
  /**
   * Whether it looked at every file of the tree. Otherwise the files it did
   * not look at keep the facts recorded before (their bytes are the same).
   */
  whole: boolean;
}

export interface BuildState {
  /** The generation the rows describe; null when there are none to trust. */
  generation: string | null;
  /**
   * The generation the live one was made from, and what its build changed
   * there: written (true) or removed (false) files. The next build turns that
   * generation into its own by replaying these, never listing it. They are
   * read row by row when replayed: after a full build they name every file.
   */
  base: string | null;
  eachChange: (visit: (rel: string, written: boolean) => void) => void;
  /** The hash of each organization's page membership file. */
  pages: Map<string, string>;
  /** How many items a page of a list holds in the live tree; null before a build recorded it. */
  pageSize: number | null;
  /** Each organization as its last build planned it. */
  orgs: Map<string, StoredOrg>;
  /** Each organization's posts as digests, folder by folder (a walk that gives a folder's fingerprints reads none of `identitiesIn`). */
  listings: Map<string, PostsListing>;
  /** The stored posts directly in one folder by file, read at each call (the caller keeps them while it needs them): their identity only. */
  identitiesIn: (orgId: string, folder: string) => ReadonlyMap<string, StoredPost>;
  /** One organization's posts as unchanged ones, by file, read on the first call: their heads, none of their records. */
  headsOf: (orgId: string) => ReadonlyMap<string, UnchangedPost>;
  /** The heads of some of an organization's posts, read at each call: those of posts edited in place. */
  headsAt: (orgId: string, files: readonly string[]) => ReadonlyMap<string, UnchangedPost>;
  /** A post's whole record, without its body. */
  recordOf: (file: string) => Omit<PostRecord, "body"> | undefined;
  /** The tree files of the generation, read as they are asked for. */
  files: StoredFiles;
  /** The secrets the live generation was audited against: a build that changes no byte still audits when they changed. */
  audited: SecretsKey | null;
  /** The audit's facts of the files of these organizations, read on the first call for each. */
  auditOf: (orgIds: Iterable<string>) => ReadonlyMap<string, AuditedFile>;
  /** The audit's facts of these files, each read on the first call for it. */
  auditAt: (rels: Iterable<string>) => ReadonlyMap<string, AuditedFile>;
  /** What the sources published for an organization when the live tree was audited. */
  expectedOf: (orgId: string) => OrgExpectation | undefined;
}

export const emptyState = (): BuildState => ({
  generation: null,
  base: null,
  eachChange: () => undefined,
  pages: new Map(),
  pageSize: null,
  orgs: new Map(),
  listings: new Map(),
  identitiesIn: () => new Map(),
  headsOf: () => new Map(),
  headsAt: () => new Map(),
  recordOf: () => undefined,
  files: filesInMemory(new Map()),
  audited: null,
  auditOf: () => new Map(),
  auditAt: () => new Map(),
  expectedOf: () => undefined,
});

/**
 * What a build records for its generation: the audit's facts are in hand;
 * `orgs` and `posts` hold the organizations it planned (the others keep their
 * rows), `dropped` those that are gone. A post of a planned organization is
 * either built (its rows are written) or null: unchanged, its rows stand.
 */
export interface NextState {
  base: string | null;
  changes: Map<string, boolean>;
  files: GenerationFiles;
  pages: Map<string, string>;
  pageSize: number;
  orgs: Map<string, StoredOrg>;
  posts: Map<string, Map<string, BuiltPost | null>>;
  /** The posts edited in place, by organization (its other posts stand as recorded): their rows are written. */
  edited: Map<string, Map<string, BuiltPost>>;
  /** The posts as read of the organizations planned and kept (an `--org` build's only). */
  listings: ReadonlyMap<string, PostsListing>;
  /** Posts of kept organizations whose files were copied anew with the same bytes: their new fingerprint. */
  refreshed: [file: string, fingerprint: string][];
  dropped: string[];
  audit: AuditState;
}

/**
 * What a build that keeps the live generation records: its planned
 * organizations, posts of the others read again, and what the sources now
 * publish of the planned ones (no byte changed, so the live tree holds it).
 */
export type KeptState = Pick<NextState, "orgs" | "posts" | "edited" | "listings" | "refreshed"> & { expected: ReadonlyMap<string, OrgExpectation> };

const STATE_FILE = "state.sqlite";
/** Bumped whenever a table or a stored JSON shape changes: an older file then reads as empty. */
const STATE_VERSION = 11;

// Records, heads and facts are rowid tables: their rows (a kilobyte, a
// megabyte for a long list's facts) would fill a WITHOUT ROWID table's pages a
// third full. A post has three rows: its identity in a narrow table (a build
// that finds nothing changed reads no other page, and one after a fresh
// checkout rewrites only these), its head and list item (what a rebuild of its
// organization reads), and its whole record (read only to render it again).
const SCHEMA = `
  CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE files (rel TEXT PRIMARY KEY, sha256 TEXT NOT NULL, ino INTEGER NOT NULL, mtime_ms REAL NOT NULL, size INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE pages (org_id TEXT PRIMARY KEY, sha256 TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE orgs (org_id TEXT PRIMARY KEY, rows_digest TEXT NOT NULL, posts_digest TEXT NOT NULL, code TEXT NOT NULL, report TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE listings (org_id TEXT NOT NULL, folder TEXT NOT NULL, fingerprints TEXT NOT NULL, content TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (org_id, folder)) WITHOUT ROWID;
  CREATE TABLE post_ids (org_id TEXT NOT NULL, file TEXT NOT NULL, fingerprint TEXT NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (org_id, file)) WITHOUT ROWID;
  CREATE TABLE posts (file TEXT NOT NULL UNIQUE, record TEXT NOT NULL);
  CREATE TABLE heads (org_id TEXT NOT NULL, file TEXT NOT NULL, head TEXT NOT NULL, category TEXT NOT NULL, summary TEXT, UNIQUE (org_id, file));
  CREATE TABLE audit (rel TEXT NOT NULL UNIQUE, sha256 TEXT NOT NULL, facts TEXT NOT NULL);
  CREATE TABLE expectations (org_id TEXT PRIMARY KEY, expected TEXT NOT NULL);
  CREATE TABLE changes (rel TEXT PRIMARY KEY, written INTEGER NOT NULL) WITHOUT ROWID;
`;

export const stateFileOf = (store: Pick<TreeStore, "stateDir">): string => path.join(store.stateDir, STATE_FILE);

const openReadOnly = (file: string) => new Database(file, { readonly: true, fileMustExist: true });

/**
 * Whether reading the state failed because the file is damaged (SQLITE_CORRUPT,
 * SQLITE_NOTADB, a stored report that is not JSON) or lacks the tables read
 * (SQLITE_ERROR: an older format, an empty file): it then reads as empty. A
 * file that cannot be read at all (SQLITE_CANTOPEN, SQLITE_IOERR_*: EACCES,
 * EIO, a folder in its place) fails the build instead: read as empty, it would
 * be replaced with nothing said.
 */
function isDamaged(error: unknown): boolean {
  if (error instanceof SyntaxError) return true;
  if (!(error instanceof Database.SqliteError)) return false;
  return error.code === "SQLITE_ERROR" || error.code === "SQLITE_NOTADB" || /^SQLITE_CORRUPT(_|$)/.test(error.code);
}

/** SQLite's message does not name the file. */
function unreadableState(file: string, error: Error, outcome = ""): CdsnapError {
  return new CdsnapError(
    "state_unreadable",
    `the build state ${file} cannot be read (${error.message})${outcome}. Fix its permissions or the disk, or delete it: the next build is then a full one`,
  );
}

/**
 * A build killed inside the state's write transaction (between its swap and
 * its commit) leaves a hot journal beside the file, which only a connection
 * that may write can roll back: a read-only one fails with
 * SQLITE_READONLY_ROLLBACK. The build reading the state holds the lock, so it
 * rolls the journal back, as opening for writing and reading once makes
 * SQLite do; the committed rows then read as they were.
 */
function rollBackTornCommit(file: string): void {
  if (!existsSync(`${file}-journal`)) return;
  const db = openForWriting(file);
  try {
    db.prepare("SELECT count(*) FROM sqlite_master").pluck().get();
  } finally {
    db.close();
  }
}

/**
 * The state of the live generation; empty when there is none or it cannot be
 * trusted. Post records, file rows and audit facts are read when first asked
 * for (a build that finds nothing changed never asks); a file that cannot be
 * read then fails the build, which the next one repairs from nothing.
 */
export function readState(store: Pick<TreeStore, "stateDir">, live: Pick<Generation, "id"> | null): BuildState {
  const file = stateFileOf(store);
  if (!live || !existsSync(file)) return emptyState();
  let db: Database.Database | undefined;
  try {
    rollBackTornCommit(file);
    db = openReadOnly(file);
    const meta = new Map(db.prepare("SELECT name, value FROM meta").raw().all() as [string, string][]);
    if (meta.get("version") !== String(STATE_VERSION) || meta.get("generation") !== live.id) return emptyState();
    const state = emptyState();
    state.generation = live.id;
    state.base = meta.get("base") ?? null;
    const pageSize = Number(meta.get("page_size"));
    state.pageSize = Number.isInteger(pageSize) && pageSize > 0 ? pageSize : null;
    state.eachChange = (visit) => readChanges(file, visit);
    for (const [orgId, sha] of db.prepare("SELECT * FROM pages").raw().iterate() as Iterable<[string, string]>) state.pages.set(orgId, sha);
    for (const [orgId, rowsDigest, postsDigest, code, report] of db.prepare("SELECT * FROM orgs").raw().iterate() as Iterable<[string, string, string, string, string]>) {
      state.orgs.set(orgId, { rowsDigest, postsDigest, code, ...(JSON.parse(report) as Omit<StoredOrg, "rowsDigest" | "postsDigest" | "code">) });
    }
    const folders = new Map<string, Map<string, FolderListing>>([...state.orgs.keys()].map((orgId) => [orgId, new Map()]));
    for (const [orgId, folder, fingerprints, content, count] of db.prepare("SELECT * FROM listings").raw().iterate() as Iterable<[string, string, string, string, number]>) {
      folders.get(orgId)?.set(folder, { fingerprints, content, count });
    }
    for (const [orgId, byFolder] of folders) state.listings.set(orgId, listingOfFolders(byFolder));
    state.identitiesIn = (orgId, folder) => readIdentities(file, orgId, folder);
    const byOrg = new Map<string, Map<string, UnchangedPost>>();
    state.headsOf = (orgId) => {
      let heads = byOrg.get(orgId);
      if (!heads) byOrg.set(orgId, (heads = readHeads(file, orgId)));
      return heads;
    };
    state.headsAt = (orgId, files) => readHeads(file, orgId, files);
    state.recordOf = (rel) => readRecord(file, rel);
    state.files = storedFiles(file);
    const salt = meta.get("audit_salt");
    const secretsKey = meta.get("audit_secrets_key");
    if (salt !== undefined && secretsKey !== undefined) state.audited = { salt, secretsKey };
    const facts = new Map<string, AuditedFile>();
    const factsRead = new Set<string>();
    state.auditOf = (orgIds) => {
      const unread = [...new Set(orgIds)].filter((orgId) => !factsRead.has(orgId));
      if (unread.length > 0) readAuditOf(file, unread, facts);
      for (const orgId of unread) factsRead.add(orgId);
      return facts;
    };
    const looked = new Set<string>();
    state.auditAt = (rels) => {
      const unread = [...rels].filter((rel) => !looked.has(rel) && !factsRead.has(orgInFolder(rel)));
      if (unread.length > 0) readAuditAt(file, unread, facts);
      for (const rel of unread) looked.add(rel);
      return facts;
    };
    const expected = new Map<string, OrgExpectation | undefined>();
    state.expectedOf = (orgId) => {
      if (!expected.has(orgId)) expected.set(orgId, readExpected(file, orgId));
      return expected.get(orgId);
    };
    return state;
  } catch (error) {
    if (isDamaged(error)) return emptyState();
    if (error instanceof Database.SqliteError) throw unreadableState(file, error, "; nothing was built");
    throw error;
  } finally {
    db?.close();
  }
}

/**
 * The earliest scheduled instant over the live generation's organizations, as
 * its build recorded it; null when the state does not say: there is none, it
 * describes another generation (a build between its swap and its commit), it
 * is of an older format, damaged, or being committed this very moment (read
 * without waiting: a server calls this, and looks again at the next change).
 */
export function readNextPublishAt(store: Pick<TreeStore, "stateDir">, live: Pick<Generation, "id"> | null): { nextPublishAt: string | null } | null {
  const file = stateFileOf(store);
  if (!live || !existsSync(file)) return null;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 0 });
    const meta = new Map(db.prepare("SELECT name, value FROM meta WHERE name IN ('version', 'generation')").raw().all() as [string, string][]);
    if (meta.get("version") !== String(STATE_VERSION) || meta.get("generation") !== live.id) return null;
    // Instants are stored as toISOString() gives them, so text order is time order (as the build's report takes the earliest).
    const next = db.prepare("SELECT min(json_extract(report, '$.nextPublishAt')) FROM orgs").pluck().get() as string | null;
    return { nextPublishAt: next };
  } catch (error) {
    // Being committed, or replaced by a first build's new file since it was found: the next look reads it.
    // Or torn by a build killed while committing (a hot journal only a writer rolls back): the next build repairs it.
    const passing =
      error instanceof Database.SqliteError && (/^SQLITE_BUSY(_|$)/.test(error.code) || error.code === "SQLITE_READONLY_ROLLBACK" || !existsSync(file));
    if (passing || isDamaged(error)) return null;
    if (error instanceof Database.SqliteError) throw unreadableState(file, error);
    throw error;
  } finally {
    db?.close();
  }
}

/** What a head row holds of a post: its PostHead, but the file and its identity (in post_ids). */
type StoredHead = Omit<PostHead, "file" | "fingerprint" | "sha256">;

/** An organization's heads: all of them, or those of `files`. */
function readHeads(file: string, orgId: string, files?: readonly string[]): Map<string, UnchangedPost> {
  return withDb(file, (db) => {
    const heads = new Map<string, UnchangedPost>();
    // The list item as the bytes it is stored as: a string of 100k of them would be decoded only to be encoded again.
    const sql = "SELECT file, fingerprint, sha256, head, category, CAST(summary AS BLOB) FROM heads JOIN post_ids USING (org_id, file) WHERE org_id = ?";
    const all = db.prepare(sql).raw();
    const one = db.prepare(`${sql} AND file = ?`).raw();
    const rows = (files === undefined ? all.iterate(orgId) : files.flatMap((f) => one.all(orgId, f))) as Iterable<[string, string, string, string, string, Buffer | null]>;
    for (const [f, fingerprint, sha256, head, category, summary] of rows) {
      heads.set(f, { file: f, ...(JSON.parse(head) as StoredHead), fingerprint, sha256, built: { category, summary } });
    }
    return heads;
  });
}

function readIdentities(file: string, orgId: string, folder: string): Map<string, StoredPost> {
  return withDb(file, (db) => {
    const byFile = new Map<string, StoredPost>();
    // The folder's key range holds its subfolders' posts too ("/" + 1 is "0"): those are left out.
    const rows = db.prepare("SELECT file, fingerprint, sha256 FROM post_ids WHERE org_id = ? AND file > ? AND file < ?").raw().iterate(orgId, `${folder}/`, `${folder}0`) as Iterable<[string, string, string]>;
    for (const [f, fingerprint, sha256] of rows) if (folderOfPost(f) === folder) byFile.set(f, { fingerprint, sha256 });
    return byFile;
  });
}

function readChanges(file: string, visit: (rel: string, written: boolean) => void): void {
  withDb(file, (db) => {
    for (const [rel, written] of db.prepare("SELECT rel, written FROM changes").raw().iterate() as Iterable<[string, number]>) visit(rel, written === 1);
  });
}

function readRecord(file: string, rel: string): Omit<PostRecord, "body"> | undefined {
  return withDb(file, (db) => {
    const row = db.prepare("SELECT fingerprint, sha256, record FROM post_ids JOIN posts USING (file) WHERE file = ?").raw().get(rel) as [string, string, string] | undefined;
    return row && recordFromJson(row[2], { fingerprint: row[0], sha256: row[1] });
  });
}

/**
 * Adds to `into` the audit's facts of the rows `sql` selects (rel, sha256,
 * facts) once for each set of parameters.
 */
function readFactsInto(file: string, sql: string, params: readonly (readonly string[])[], into: Map<string, AuditedFile>): void {
  withDb(file, (db) => {
    const rows = db.prepare(sql).raw();
    for (const values of params) {
      for (const [rel, sha256, facts] of rows.iterate(...values) as Iterable<[string, string, string]>) {
        into.set(rel, { sha256, facts: JSON.parse(facts) as FileFacts });
      }
    }
  });
}

/** The facts of these organizations' files: by key range, never the whole table ("/" + 1 is "0": a range holds exactly the paths under one folder). */
function readAuditOf(file: string, orgIds: readonly string[], into: Map<string, AuditedFile>): void {
  const ranges = orgIds.map((orgId) => [orgFolderOf(orgId), `${orgFolderOf(orgId).slice(0, -1)}0`]);
  readFactsInto(file, "SELECT rel, sha256, facts FROM audit WHERE rel >= ? AND rel < ?", ranges, into);
}

function readAuditAt(file: string, rels: readonly string[], into: Map<string, AuditedFile>): void {
  readFactsInto(file, "SELECT rel, sha256, facts FROM audit WHERE rel = ?", rels.map((rel) => [rel]), into);
}

function readExpected(file: string, orgId: string): OrgExpectation | undefined {
  return withDb(file, (db) => {
    const row = db.prepare("SELECT expected FROM expectations WHERE org_id = ?").raw().get(orgId) as [string] | undefined;
    return row ? (JSON.parse(row[0]) as OrgExpectation) : undefined;
  });
}

interface FileChanges {
  put: [string, FileEntry][];
  drop: string[];
}

/**
 * The file rows that differ between the stored table (`stored`, null for a new
 * file) and the next generation's: those it placed and removed when it was
 * made as the stored generation's copy, else every row compared.
 */
function fileChanges(next: GenerationFiles, stored: FileTable | null): FileChanges {
  if (next.base !== null && next.base === stored) {
    return { put: [...next.placed].filter(([rel, entry]) => !sameEntry(entry, stored.get(rel))), drop: [...next.removed].filter((rel) => stored.get(rel) !== undefined) };
  }
  const before = stored?.all() ?? new Map<string, FileEntry>();
  const after = generationFiles(next).all();
  return { put: [...after].filter(([rel, entry]) => !sameEntry(entry, before.get(rel))), drop: [...before.keys()].filter((rel) => !after.has(rel)) };
}

/** Opens the state for writing: a rollback journal, synced (see writeState). */
function openForWriting(file: string): Database.Database {
  const db = new Database(file);
  // A rollback journal, synced: reading the file (read-only, as every build
  // does first) then creates nothing beside it, and a power cut cannot leave
  // it damaged. A commit lost leaves rows naming the generation before: read
  // as empty, never as wrong.
  db.pragma("journal_mode = DELETE");
  db.pragma("synchronous = FULL");
  return db;
}

/**
 * Records `next` as the state of generation `genId`: only the rows that differ
 * from `previous` (what readState returned) are written; when it is empty, a
 * new file gets every row. The transaction stays open while `publish` runs
 * (the swap) and commits only once it succeeds.
 */
export async function writeState(
  store: Pick<TreeStore, "stateDir">,
  genId: string,
  next: NextState,
  previous: BuildState,
  publish: () => Promise<void>,
): Promise<void> {
  const file = stateFileOf(store);
  const fresh = previous.generation === null;
  // Read before the file is replaced or written: the rows this write compares against.
  const fileRows = fileChanges(next.files, fresh ? null : previous.files);
  // readState found no rows of the live generation (none, stale, damaged, older format): start a new file.
  // Under the build lock nothing else writes the file between that read and this write.
  if (fresh) for (const suffix of ["", "-journal"]) rmSync(`${file}${suffix}`, { force: true });
  const db = openForWriting(file);
  try {
    db.exec("BEGIN IMMEDIATE");
    try {
      if (fresh) db.exec(SCHEMA);
      writeRows(db, genId, next, previous, fileRows);
      await publish();
      db.exec("COMMIT");
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  } finally {
    db.close();
  }
}

/**
 * Records what a build that keeps the live generation learned (a post touched,
 * or checked out anew, with the same bytes; a draft edited; an organization's
 * digest) for the live generation, so the next build need not read or plan it
 * again. Only rows that differ are written.
 */
export function refreshState(store: Pick<TreeStore, "stateDir">, previous: BuildState, kept: KeptState): void {
  const db = openForWriting(stateFileOf(store));
  try {
    db.transaction(() => {
      writeOrgRows(db, kept, previous);
      writeExpectations(db, kept.expected, previous, false);
    })();
  } finally {
    db.close();
  }
}

export const sameListing = (a: PostsListing, b: PostsListing | undefined): boolean => a.fingerprints === b?.fingerprints && a.content === b.content;

/**
 * The rows of the planned organizations (their digest and figures when they
 * differ, their built posts and those edited in place), the new fingerprints of unchanged posts, the
 * listings that differ, and no rows of posts or organizations gone.
 */
function writeOrgRows(db: Database.Database, next: Pick<NextState, "orgs" | "posts" | "edited" | "listings" | "refreshed"> & { dropped?: readonly string[] }, previous: BuildState): void {
  const putOrg = db.prepare("INSERT OR REPLACE INTO orgs VALUES (?, ?, ?, ?, ?)");
  const putId = db.prepare("INSERT OR REPLACE INTO post_ids VALUES (?, ?, ?, ?)");
  const putPost = db.prepare("INSERT OR REPLACE INTO posts VALUES (?, ?)");
  const putHead = db.prepare("INSERT OR REPLACE INTO heads VALUES (?, ?, ?, ?, ?)");
  const dropId = db.prepare("DELETE FROM post_ids WHERE org_id = ? AND file = ?");
  const dropPost = db.prepare("DELETE FROM posts WHERE file = ?");
  const dropHead = db.prepare("DELETE FROM heads WHERE org_id = ? AND file = ?");
  for (const [orgId, { rowsDigest, postsDigest, code, ...report }] of next.orgs) {
    const stored = previous.orgs.get(orgId);
    const same = stored?.rowsDigest === rowsDigest && stored.postsDigest === postsDigest && stored.code === code;
    if (!same || JSON.stringify(report) !== JSON.stringify(withoutKeys(stored))) putOrg.run(orgId, rowsDigest, postsDigest, code, JSON.stringify(report));
  }
  for (const [orgId, byFile] of [...next.posts, ...next.edited]) {
    for (const [f, post] of byFile) {
      if (post === null) continue;
      putId.run(orgId, f, post.post.fingerprint, post.post.sha256);
      putPost.run(f, recordJsonOf(post.post));
      putHead.run(orgId, f, JSON.stringify(headFieldsOf(post.post)), post.built.category, post.built.summary?.toString("utf8") ?? null);
    }
  }
  const refresh = db.prepare("UPDATE post_ids SET fingerprint = ? WHERE org_id = ? AND file = ?");
  for (const [f, fingerprint] of next.refreshed) refresh.run(fingerprint, orgOfPost(f), f);
  const putFolder = db.prepare("INSERT OR REPLACE INTO listings VALUES (?, ?, ?, ?, ?)");
  const dropFolder = db.prepare("DELETE FROM listings WHERE org_id = ? AND folder = ?");
  for (const [orgId, listing] of next.listings) {
    const before = previous.listings.get(orgId);
    if (sameListing(listing, before)) continue;
    for (const [folder, now] of listing.folders) {
      const was = before?.folders.get(folder);
      if (was?.fingerprints !== now.fingerprints || was.content !== now.content || was.count !== now.count) putFolder.run(orgId, folder, now.fingerprints, now.content, now.count);
    }
    // An organization with no listing recorded has no row: they are written and dropped with its `orgs` row.
    for (const folder of before?.folders.keys() ?? []) if (!listing.folders.has(folder)) dropFolder.run(orgId, folder);
  }
  // Posts gone from a planned organization, and every row of an organization gone.
  const storedFiles = db.prepare("SELECT file FROM post_ids WHERE org_id = ?").pluck();
  for (const [orgId, byFile] of next.posts) {
    const gone = (storedFiles.all(orgId) as string[]).filter((f) => !byFile.has(f));
    for (const f of gone) {
      dropId.run(orgId, f);
      dropPost.run(f);
      dropHead.run(orgId, f);
    }
  }
  for (const orgId of next.dropped ?? []) {
    db.prepare("DELETE FROM listings WHERE org_id = ?").run(orgId);
    db.prepare("DELETE FROM posts WHERE file IN (SELECT file FROM post_ids WHERE org_id = ?)").run(orgId);
    db.prepare("DELETE FROM heads WHERE org_id = ?").run(orgId);
    db.prepare("DELETE FROM post_ids WHERE org_id = ?").run(orgId);
    db.prepare("DELETE FROM orgs WHERE org_id = ?").run(orgId);
  }
}

const withoutKeys = ({ rowsDigest: _rows, postsDigest: _posts, code: _code, ...report }: StoredOrg) => report;

function writeRows(
  db: Database.Database,
  genId: string,
  next: NextState,
  previous: BuildState,
  fileRows: FileChanges,
): void {
  const put = (sql: string) => db.prepare(sql);
  const setMeta = put("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)");
  const putFile = put("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)");
  const dropFile = put("DELETE FROM files WHERE rel = ?");
  const putPages = put("INSERT OR REPLACE INTO pages VALUES (?, ?)");
  const dropPages = put("DELETE FROM pages WHERE org_id = ?");
  setMeta.run("version", String(STATE_VERSION));
  setMeta.run("generation", genId);
  setMeta.run("page_size", String(next.pageSize));
  if (next.base === null) db.prepare("DELETE FROM meta WHERE name = 'base'").run();
  else setMeta.run("base", next.base);
  db.exec("DELETE FROM changes");
  // Without a base the next build has no generation to replay them into: it links the live tree (a full build's every file).
  const putChange = put("INSERT INTO changes VALUES (?, ?)");
  if (next.base !== null) for (const [rel, written] of next.changes) putChange.run(rel, written ? 1 : 0);
  for (const [rel, entry] of fileRows.put) putFile.run(rel, ...entry);
  for (const rel of fileRows.drop) dropFile.run(rel);
  for (const [orgId, sha] of next.pages) if (previous.pages.get(orgId) !== sha) putPages.run(orgId, sha);
  for (const orgId of previous.pages.keys()) if (!next.pages.has(orgId)) dropPages.run(orgId);
  writeOrgRows(db, next, previous);
  setMeta.run("audit_salt", next.audit.salt);
  setMeta.run("audit_secrets_key", next.audit.secretsKey);
  writeAuditRows(db, next, previous);
}

/**
 * The audit's facts: all of them anew after an audit of every file; else
 * those that differ among the files it looked at, and none of the files gone.
 */
function writeAuditRows(db: Database.Database, next: NextState, previous: BuildState): void {
  const putAudit = db.prepare("INSERT OR REPLACE INTO audit VALUES (?, ?, ?)");
  const dropAudit = db.prepare("DELETE FROM audit WHERE rel = ?");
  const { files, whole, expected } = next.audit;
  if (whole) db.exec("DELETE FROM audit; DELETE FROM expectations");
  const known = whole ? new Map<string, AuditedFile>() : previous.auditAt(files.keys());
  for (const [rel, audited] of files) {
    const old = known.get(rel);
    if (old?.sha256 !== audited.sha256 || old.facts !== audited.facts) putAudit.run(rel, audited.sha256, JSON.stringify(audited.facts));
  }
  if (!whole) for (const [rel, written] of next.changes) if (!written) dropAudit.run(rel);
  writeExpectations(db, expected, previous, whole);
  for (const orgId of next.dropped) db.prepare("DELETE FROM expectations WHERE org_id = ?").run(orgId);
}

/** The expectations that differ from those recorded (all of them, `whole`, after the table was emptied). */
function writeExpectations(db: Database.Database, expected: ReadonlyMap<string, OrgExpectation>, previous: BuildState, whole: boolean): void {
  const putExpected = db.prepare("INSERT OR REPLACE INTO expectations VALUES (?, ?)");
  for (const [orgId, expectation] of expected) {
    const recorded = whole ? undefined : previous.expectedOf(orgId);
    // A kept part's expectations are the recorded objects: only the rest is compared.
    const kept = recorded !== undefined && expectation.posts === recorded.posts && expectation.blocks === recorded.blocks;
    if (kept && JSON.stringify([expectation.orgId, expectation.categoryIds]) === JSON.stringify([recorded.orgId, recorded.categoryIds])) continue;
    const json = JSON.stringify(expectation);
    if (whole || JSON.stringify(recorded) !== json) putExpected.run(orgId, json);
  }
}
