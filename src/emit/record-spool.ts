/**
 * The records of the posts a build parses wait here, in a SQLite file of the
 * build's own beside its state, from the moment each is parsed until its
 * files are rendered and its row is written into the state. The build holds
 * each post's head in memory (what planning, ordering and the cross-checks
 * read) and reads a record back when it renders the post's list item or
 * files: memory that grew with the posts' records (about 2.3 KB each, 230 MiB
 * for 100k posts) grows with their heads.
 *
 * The file is scratch: no journal, no sync, one transaction open for its whole
 * life (its rows are read by the connection that wrote them, never by
 * another), removed when the build ends, and removed first when a killed
 * build left one.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { headFieldsOf, recordJsonOf, type PostRecord, type RecordSpool, type SpooledPost } from "../model/snapshot.js";

const SPOOL_FILE = "records.sqlite";

export interface OpenSpool extends RecordSpool {
  /** Closes and removes the file. */
  close: () => void;
}

/** A spool in `dir` (the build state's folder, which the build lock holds), made by the first record kept: a build that parses nothing makes none. */
export function openRecordSpool(dir: string): OpenSpool {
  const file = path.join(dir, SPOOL_FILE);
  rmSync(file, { force: true });
  let opened: { db: Database.Database; put: Database.Statement; get: Database.Statement } | null = null;
  const open = () => {
    if (opened) return opened;
    const db = new Database(file);
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    db.exec("CREATE TABLE records (file TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID");
    db.exec("BEGIN");
    // A post read back whole after being parsed (a second pass of read-posts.ts) replaces its first record.
    opened = { db, put: db.prepare("INSERT OR REPLACE INTO records VALUES (?, ?)"), get: db.prepare("SELECT record FROM records WHERE file = ?").pluck() };
    return opened;
  };
  const spool: OpenSpool = {
    keep: (record: PostRecord): SpooledPost => {
      open().put.run(record.file, recordJsonOf(record));
      const head: SpooledPost = { file: record.file, ...headFieldsOf(record), fingerprint: record.fingerprint, sha256: record.sha256, spool };
      if (record.body !== undefined) head.body = record.body;
      return head;
    },
    jsonOf: (post: string) => {
      const json = opened?.get.get(post) as string | undefined;
      if (json === undefined) throw new Error(`${post} has no record in the build's spool`);
      return json;
    },
    close: () => {
      opened?.db.close();
      opened = null;
      rmSync(file, { force: true });
    },
  };
  return spool;
}
