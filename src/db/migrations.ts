/**
 * `cdsnap db migrate`: makes a database ready for cdsnap without taking it over.
 * A new file gets the contract's tables. An existing one, made by the admin
 * tools or by an earlier cdsnap, is adopted: a missing contract table is created
 * empty, and each of cdsnap's own additions is applied once and recorded in
 * `cdsnap_schema`. Nothing else changes: no row and no column of the admin
 * tools' tables, and never `user_version`, which is theirs.
 */
import { UsageError } from "../errors.js";
import { CONTRACT_TABLES_SQL, describeGaps, findSchemaGaps } from "./contract-schema.js";
import type { Db } from "./open.js";

/** cdsnap's additions, by name; none is needed to read, so a database without them builds and serves. */
const ADDITIONS: readonly { name: string; table: string; sql: string }[] = [
  // `keys list --org` lists by organization; the key check finds keys by hash through the UNIQUE index.
  { name: "api_keys_org", table: "api_keys", sql: "CREATE INDEX IF NOT EXISTS api_keys_org ON api_keys(org_id)" },
];

const BOOKKEEPING_SQL = `CREATE TABLE IF NOT EXISTS cdsnap_schema(
  name TEXT PRIMARY KEY,
  applied_at TEXT NOT NULL
)`;

export interface MigrateResult {
  tablesCreated: string[];
  additionsApplied: string[];
}

/** Adopts the database in one transaction; running it again changes nothing. */
export function migrate(db: Db, now: Date = new Date()): MigrateResult {
  return db
    .transaction((): MigrateResult => {
      const gaps = findSchemaGaps(db);
      if (gaps.columns.length > 0) throw new UsageError(describeGaps(db.name, { tables: [], columns: gaps.columns }));
      if (gaps.tables.length > 0) db.exec(CONTRACT_TABLES_SQL);
      const hasBookkeeping = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'cdsnap_schema'").get();
      const applied = new Set(
        hasBookkeeping ? (db.prepare("SELECT name FROM cdsnap_schema").pluck().all() as string[]) : [],
      );
      // A contract table the admin tools made a view cannot take an index; the addition waits, unrecorded.
      const isTable = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE").pluck();
      const pending = ADDITIONS.filter((addition) => !applied.has(addition.name) && isTable.get(addition.table));
      if (pending.length > 0) {
        db.exec(BOOKKEEPING_SQL);
        const record = db.prepare("INSERT INTO cdsnap_schema (name, applied_at) VALUES (?, ?)");
        for (const addition of pending) {
          db.exec(addition.sql);
          record.run(addition.name, now.toISOString());
        }
      }
      return { tablesCreated: gaps.tables, additionsApplied: pending.map((addition) => addition.name) };
    })
    .immediate();
}
