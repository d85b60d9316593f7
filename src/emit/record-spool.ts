/**
 * The records of the posts a build parses wait here, from the moment each is
 * parsed until its files are rendered and its row is written into the state.
 * The build holds each post's head as an object (what planning, ordering and
 * the cross-checks read) and reads a record back when it renders the post's
 * list item or files: memory that grew with the posts' records (about 2.3 KB
 * of objects each, 230 MiB for 100k posts) grows with their heads.
 *
 * Each record is kept as the JSON the state stores it in: in memory, as one
 * flat string (about half the record's objects), while the strings held come
 * to less than the budget; past it, in a SQLite file of the build's own beside
 * its state. So a build of a few thousand posts pays nothing for the file,
 * and a large one holds a bounded part of its records.
 *
 * The file is scratch: no journal, no sync, one transaction open for its whole
 * life (its rows are read by the connection that wrote them, never by
 * another), made by the first record past the budget, removed when the build
 * ends, and removed first when a killed build left one.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { headFieldsOf, type RecordSpool, type SpoolForm, type SpooledPost } from "../model/snapshot.js";

const SPOOL_FILE = "records.sqlite";

/** UTF-16 units of record JSON held in memory: about 13k posts of the bench's corpus, 16–32 MiB. */
const DEFAULT_RECORDS_IN_MEMORY = 16 * 1024 * 1024;

export interface OpenSpool extends RecordSpool {
  /** Closes and removes the file. */
  close: () => void;
}

interface SpoolFile {
  db: Database.Database;
  put: Database.Statement;
  get: Database.Statement;
}

/**
 * A spool whose file, if it needs one, is in `dir` (the build state's folder,
 * which the build lock holds); `inMemory` UTF-16 units of JSON are held before
 * it does.
 */
export function openRecordSpool(dir: string, inMemory = DEFAULT_RECORDS_IN_MEMORY): OpenSpool {
  const file = path.join(dir, SPOOL_FILE);
  rmSync(file, { force: true });
  // Rows in memory are numbered from -1 down, rows in the file by their rowid (from 1 up).
  const held = new Map<number, string>();
  let heldUnits = 0;
  let opened: SpoolFile | null = null;
  const open = (): SpoolFile => {
    if (opened) return opened;
    const db = new Database(file);
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    // Looked up by rowid, which each post's head holds: no index to keep, none to search. A post read back
    // whole after it was parsed (a second pass of read-posts.ts) gets a row of its own; the first is never read.
    db.exec("CREATE TABLE records (record TEXT NOT NULL)");
    db.exec("BEGIN");
    opened = { db, put: db.prepare("INSERT INTO records VALUES (?)"), get: db.prepare("SELECT record FROM records WHERE rowid = ?").pluck() };
    return opened;
  };
  const put = (json: string): number => {
    if (heldUnits + json.length <= inMemory) {
      heldUnits += json.length;
      const row = -(held.size + 1);
      held.set(row, json);
      return row;
    }
    return Number(open().put.run(json).lastInsertRowid);
  };
  const spool: OpenSpool = {
    keep: ({ head, json }: SpoolForm, body?: string): SpooledPost => {
      // Made here, field by field: a head as a worker's message brings it holds about 300 bytes more (100k posts: 31 MiB).
      const spooled: SpooledPost = { file: head.file, ...headFieldsOf(head), fingerprint: head.fingerprint, sha256: head.sha256, spool, row: put(json) };
      if (body !== undefined) spooled.body = body;
      return spooled;
    },
    jsonOf: (post: SpooledPost) => {
      let json: string | undefined;
      if (post.spool === spool) json = post.row < 0 ? held.get(post.row) : (opened?.get.get(post.row) as string | undefined);
      if (json === undefined) throw new Error(`${post.file} has no record in this build's spool`);
      return json;
    },
    close: () => {
      held.clear();
      opened?.db.close();
      opened = null;
      rmSync(file, { force: true });
    },
  };
  return spool;
}
