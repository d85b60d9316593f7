import Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { UsageError } from "../errors.js";

export type Db = Database.Database;

/**
 * Opens the database. The busy timeout makes writers queue instead of failing
 * with SQLITE_BUSY. `readonly` is for the build, check and audit, which never
 * write.
 */
export function openDatabase(file: string, options: { readonly?: boolean; create?: boolean } = {}): Db {
  if (!options.create && !existsSync(file)) {
    throw new UsageError(`database ${file} does not exist; create it with: cdsnap db migrate --db ${file}`);
  }
  const db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: !options.create });
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  if (!options.readonly) {
    // better-sqlite3 builds SQLite with NORMAL for WAL, where a commit is not
    // synced: an acknowledged PATCH could be lost on power loss. The write proxy
    // commits once per batch of PATCHes, so the sync costs little.
    db.pragma("synchronous = FULL");
  }
  return db;
}

const statements = new WeakMap<Db, Map<string, Database.Statement>>();

/** A statement prepared once per connection: preparing again on every PATCH was a tenth of the write proxy's time. */
export function prepared(db: Db, sql: string): Database.Statement {
  let bySql = statements.get(db);
  if (!bySql) statements.set(db, (bySql = new Map()));
  let statement = bySql.get(sql);
  if (!statement) bySql.set(sql, (statement = db.prepare(sql)));
  return statement;
}
