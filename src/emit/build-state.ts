/**
 * What the live generation was built from and holds, in one SQLite file beside
 * the generations (`.site.cdsnap/state.sqlite`, never in a tree): the SHA-256
 * and identity of every file, each organization's page membership hash, the
 * record of every post, and the facts the audit established per file, with the
 * id of the generation they describe.
 *
 * A build reads it to decide what to reuse, and writes only the rows that
 * differ, in one transaction that commits after the swap: a build that fails,
 * or is killed before the commit, leaves the rows as they were. Rows that name
 * another generation than the live one (killed between swap and commit), a
 * damaged file or an older format read as empty: the build then re-renders and
 * re-hashes, which costs time and never changes a byte of the tree.
 */
import Database from "better-sqlite3";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import type { FileFacts } from "../audit/tree-rules.js";
import type { PostRecord } from "../model/snapshot.js";
import type { Generation, TreeStore } from "./tree-store.js";

/**
 * A post's record without its body, the key of everything its files were
 * rendered from, and (published) its list item as canonical JSON.
 */
export type CachedPost = Omit<PostRecord, "body"> & { key: string; summary?: string };

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
  files: Map<string, AuditedFile>;
}

export interface BuildState {
  /** The generation the rows describe; null when there are none to trust. */
  generation: string | null;
  /**
   * The generation the live one was made from, and what its build changed
   * there: written (true) or removed (false) files. The next build turns that
   * generation into its own by replaying these, never listing it.
   */
  base: string | null;
  changes: Map<string, boolean>;
  /** The code that parsed the records: another version parses every post again. */
  code: string | null;
  files: Map<string, FileEntry>;
  /** The hash of each organization's page membership file. */
  pages: Map<string, string>;
  /** Per organization, the record of every post by file. */
  posts: Map<string, Map<string, CachedPost>>;
  /** The secrets the live generation was audited against: a build that changes no byte still audits when they changed. */
  audited: SecretsKey | null;
  /** The audit's record, read on the first call (later calls return the same); null when there is none. */
  audit: (() => AuditState | null) | null;
}

export const emptyState = (): BuildState => ({
  generation: null,
  base: null,
  changes: new Map(),
  code: null,
  files: new Map(),
  pages: new Map(),
  posts: new Map(),
  audited: null,
  audit: null,
});

/** What a build records for its generation: the audit's facts are in hand. */
export interface NextState extends Omit<BuildState, "audited" | "audit"> {
  audit: AuditState;
}

const STATE_FILE = "state.sqlite";
/** Bumped whenever a table or a stored JSON shape changes: an older file then reads as empty. */
const STATE_VERSION = 3;

// Records and facts are rowid tables: their rows (a kilobyte, a megabyte for a
// long list's facts) would fill a WITHOUT ROWID table's pages a third full.
const SCHEMA = `
  CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE files (rel TEXT PRIMARY KEY, sha256 TEXT NOT NULL, ino INTEGER NOT NULL, mtime_ms REAL NOT NULL, size INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE pages (org_id TEXT PRIMARY KEY, sha256 TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE posts (file TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL, record TEXT NOT NULL);
  CREATE TABLE audit (rel TEXT NOT NULL UNIQUE, sha256 TEXT NOT NULL, facts TEXT NOT NULL);
  CREATE TABLE changes (rel TEXT PRIMARY KEY, written INTEGER NOT NULL) WITHOUT ROWID;
`;

export const stateFileOf = (store: Pick<TreeStore, "stateDir">): string => path.join(store.stateDir, STATE_FILE);

/** The state of the live generation; empty when there is none or it cannot be trusted. */
export function readState(store: Pick<TreeStore, "stateDir">, live: Pick<Generation, "id"> | null): BuildState {
  const file = stateFileOf(store);
  if (!live || !existsSync(file)) return emptyState();
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const meta = new Map(db.prepare("SELECT name, value FROM meta").raw().all() as [string, string][]);
    if (meta.get("version") !== String(STATE_VERSION) || meta.get("generation") !== live.id) return emptyState();
    const state = emptyState();
    state.generation = live.id;
    state.base = meta.get("base") ?? null;
    state.code = meta.get("code") ?? null;
    for (const [rel, written] of db.prepare("SELECT rel, written FROM changes").raw().iterate() as Iterable<[string, number]>) {
      state.changes.set(rel, written === 1);
    }
    for (const [rel, sha, ino, mtime, size] of db.prepare("SELECT * FROM files").raw().iterate() as Iterable<[string, string, number, number, number]>) {
      state.files.set(rel, [sha, ino, mtime, size]);
    }
    for (const [orgId, sha] of db.prepare("SELECT * FROM pages").raw().iterate() as Iterable<[string, string]>) state.pages.set(orgId, sha);
    for (const [file, orgId, record] of db.prepare("SELECT file, org_id, record FROM posts").raw().iterate() as Iterable<[string, string, string]>) {
      postsOf(state, orgId).set(file, JSON.parse(record) as CachedPost);
    }
    const salt = meta.get("audit_salt");
    const secretsKey = meta.get("audit_secrets_key");
    // The facts are read only when an audit runs: a build that changes nothing never needs them.
    if (salt !== undefined && secretsKey !== undefined) {
      state.audited = { salt, secretsKey };
      let audit: AuditState | null | undefined;
      state.audit = () => (audit === undefined ? (audit = readAudit(file, salt, secretsKey)) : audit);
    }
    return state;
  } catch {
    return emptyState();
  } finally {
    db?.close();
  }
}

function readAudit(file: string, salt: string, secretsKey: string): AuditState | null {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const files = new Map<string, AuditedFile>();
    for (const [rel, sha256, facts] of db.prepare("SELECT rel, sha256, facts FROM audit").raw().iterate() as Iterable<[string, string, string]>) {
      files.set(rel, { sha256, facts: JSON.parse(facts) as FileFacts });
    }
    return { salt, secretsKey, files };
  } catch {
    return null;
  } finally {
    db?.close();
  }
}

export function postsOf(state: Pick<BuildState, "posts">, orgId: string): Map<string, CachedPost> {
  let byFile = state.posts.get(orgId);
  if (!byFile) state.posts.set(orgId, (byFile = new Map()));
  return byFile;
}

const sameEntry = (a: FileEntry, b: FileEntry | undefined) =>
  b !== undefined && a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];

/** A post's record is fixed by its source file's fingerprint and bytes; its files, by the key. */
const samePost = (a: CachedPost, b: CachedPost | undefined) =>
  b !== undefined && a.key === b.key && a.fingerprint === b.fingerprint && a.sha256 === b.sha256 && a.summary === b.summary;

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
  // readState found no rows of the live generation (none, stale, damaged, older format): start a new file.
  // Under the build lock nothing else writes the file between that read and this write.
  if (previous.generation === null) for (const suffix of ["", "-journal"]) rmSync(`${file}${suffix}`, { force: true });
  const db = new Database(file);
  try {
    // A rollback journal, synced: reading the file (read-only, as every build
    // does first) then creates nothing beside it, and a power cut cannot leave
    // it damaged. A commit lost leaves rows naming the generation before: read
    // as empty, never as wrong.
    db.pragma("journal_mode = DELETE");
    db.pragma("synchronous = FULL");
    db.exec("BEGIN IMMEDIATE");
    try {
      if (previous.generation === null) db.exec(SCHEMA);
      writeRows(db, genId, next, previous);
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
 * Records posts whose files did not change but whose records did (a file
 * touched, or checked out anew, with the same bytes; a draft edited) for the
 * live generation, so the next build need not read them again. Only rows that
 * differ are written.
 */
export function refreshPosts(store: Pick<TreeStore, "stateDir">, previous: BuildState, posts: NextState["posts"], code: string): void {
  const { put, drop } = postRowChanges(posts, previous, code);
  if (put.length === 0 && drop.length === 0 && previous.code === code) return;
  const db = new Database(stateFileOf(store));
  try {
    db.pragma("journal_mode = DELETE");
    db.pragma("synchronous = FULL");
    db.transaction(() => {
      writePostRows(db, { put, drop });
      db.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES ('code', ?)").run(code);
    })();
  } finally {
    db.close();
  }
}

interface PostRowChanges {
  put: [file: string, orgId: string, post: CachedPost][];
  drop: string[];
}

/** The post rows to write: those that differ, or every one when other code parsed the stored ones. */
function postRowChanges(posts: NextState["posts"], previous: Pick<BuildState, "posts" | "code">, code: string): PostRowChanges {
  const changes: PostRowChanges = { put: [], drop: [] };
  const before = new Map<string, CachedPost>();
  for (const byFile of previous.posts.values()) for (const [f, post] of byFile) before.set(f, post);
  for (const [orgId, byFile] of posts) {
    for (const [f, post] of byFile) {
      if (previous.code !== code || !samePost(post, before.get(f))) changes.put.push([f, orgId, post]);
      before.delete(f);
    }
  }
  changes.drop.push(...before.keys());
  return changes;
}

function writePostRows(db: Database.Database, changes: PostRowChanges): void {
  const putPost = db.prepare("INSERT OR REPLACE INTO posts VALUES (?, ?, ?)");
  const dropPost = db.prepare("DELETE FROM posts WHERE file = ?");
  for (const [f, orgId, post] of changes.put) putPost.run(f, orgId, JSON.stringify(post));
  for (const f of changes.drop) dropPost.run(f);
}

function writeRows(db: Database.Database, genId: string, next: NextState, previous: BuildState): void {
  const put = (sql: string) => db.prepare(sql);
  const setMeta = put("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)");
  const putFile = put("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)");
  const dropFile = put("DELETE FROM files WHERE rel = ?");
  const putPages = put("INSERT OR REPLACE INTO pages VALUES (?, ?)");
  const dropPages = put("DELETE FROM pages WHERE org_id = ?");
  const putAudit = put("INSERT OR REPLACE INTO audit VALUES (?, ?, ?)");
  const dropAudit = put("DELETE FROM audit WHERE rel = ?");
  setMeta.run("version", String(STATE_VERSION));
  setMeta.run("generation", genId);
  if (next.code !== null) setMeta.run("code", next.code);
  if (next.base === null) db.prepare("DELETE FROM meta WHERE name = 'base'").run();
  else setMeta.run("base", next.base);
  db.exec("DELETE FROM changes");
  const putChange = put("INSERT INTO changes VALUES (?, ?)");
  for (const [rel, written] of next.changes) putChange.run(rel, written ? 1 : 0);
  for (const [rel, entry] of next.files) if (!sameEntry(entry, previous.files.get(rel))) putFile.run(rel, ...entry);
  for (const rel of previous.files.keys()) if (!next.files.has(rel)) dropFile.run(rel);
  for (const [orgId, sha] of next.pages) if (previous.pages.get(orgId) !== sha) putPages.run(orgId, sha);
  for (const orgId of previous.pages.keys()) if (!next.pages.has(orgId)) dropPages.run(orgId);
  writePostRows(db, postRowChanges(next.posts, previous, next.code ?? ""));
  setMeta.run("audit_salt", next.audit.salt);
  setMeta.run("audit_secrets_key", next.audit.secretsKey);
  const was = previous.audit?.() ?? null;
  if (was === null) db.exec("DELETE FROM audit");
  const known = was?.secretsKey === next.audit.secretsKey ? was.files : new Map<string, AuditedFile>();
  for (const [rel, audited] of next.audit.files) {
    const old = known.get(rel);
    if (old?.sha256 !== audited.sha256 || old.facts !== audited.facts) putAudit.run(rel, audited.sha256, JSON.stringify(audited.facts));
  }
  for (const rel of was?.files.keys() ?? []) if (!next.audit.files.has(rel)) dropAudit.run(rel);
}
