/**
 * The data contract's tables. The organization's admin tools own them: they
 * create the tables and write the rows, in whatever column order, with extra
 * columns and tables of their own, and with `PRAGMA user_version` theirs to use.
 * cdsnap reads by column name and asks only that every contract column exists.
 */
import Database from "better-sqlite3";
import { UsageError } from "../errors.js";
import { openDatabase, type Db } from "./open.js";

/** The contract's statements, verbatim but for IF NOT EXISTS: `db migrate` uses them for a table that is missing. */
export const CONTRACT_TABLES_SQL = `
CREATE TABLE IF NOT EXISTS organizations(
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  slug TEXT NOT NULL UNIQUE,
  google_analytics_id TEXT,
  meta_pixel_id TEXT,
  gtm_container_id TEXT,
  business_description TEXT NOT NULL DEFAULT '',
  allowed_origins TEXT
);
CREATE TABLE IF NOT EXISTS organization_secrets(
  org_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (org_id, name)
);
CREATE TABLE IF NOT EXISTS business_offers(
  org_id TEXT NOT NULL REFERENCES organizations(id),
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  link TEXT,
  PRIMARY KEY (org_id, position)
);
CREATE TABLE IF NOT EXISTS api_keys(
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  key_sha256 TEXT NOT NULL UNIQUE,
  scopes TEXT NOT NULL,
  label TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS categories(
  org_id TEXT NOT NULL REFERENCES organizations(id),
  id TEXT NOT NULL,
  slug TEXT NOT NULL,
  value TEXT NOT NULL,
  position INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, id), UNIQUE (org_id, slug)
);
CREATE TABLE IF NOT EXISTS blocks(
  org_id TEXT NOT NULL REFERENCES organizations(id),
  id TEXT NOT NULL,
  slug TEXT NOT NULL,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  position INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, id), UNIQUE (org_id, slug)
);
CREATE TABLE IF NOT EXISTS block_fields(
  org_id TEXT NOT NULL,
  block_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  key TEXT NOT NULL,
  type TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (org_id, block_id, position),
  FOREIGN KEY (org_id, block_id) REFERENCES blocks(org_id, id)
);
CREATE TABLE IF NOT EXISTS block_pages(
  org_id TEXT NOT NULL,
  block_id TEXT NOT NULL,
  page TEXT NOT NULL,
  PRIMARY KEY (org_id, block_id, page),
  FOREIGN KEY (org_id, block_id) REFERENCES blocks(org_id, id)
);
`;

interface ContractColumn {
  name: string;
  type: string;
  notNull: boolean;
  /** The DEFAULT clause's SQL text, or null. */
  defaultSql: string | null;
}

let contractColumns: ReadonlyMap<string, readonly ContractColumn[]> | undefined;

/** Each contract table's columns, read off the statements above so the two cannot disagree. */
function contractTables(): ReadonlyMap<string, readonly ContractColumn[]> {
  if (!contractColumns) {
    const scratch = new Database(":memory:");
    try {
      scratch.exec(CONTRACT_TABLES_SQL);
      const names = scratch
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY rowid")
        .pluck()
        .all() as string[];
      contractColumns = new Map(names.map((table) => [table, columnsOf(scratch, table)]));
    } finally {
      scratch.close();
    }
  }
  return contractColumns;
}

function columnsOf(db: Db, table: string): ContractColumn[] {
  // table_xinfo also lists generated columns; a view answers it like a table.
  const rows = db.prepare("SELECT name, type, \"notnull\", dflt_value FROM pragma_table_xinfo(?)").all(table) as {
    name: string;
    type: string;
    notnull: number;
    dflt_value: string | null;
  }[];
  return rows.map((c) => ({ name: c.name, type: c.type, notNull: c.notnull === 1, defaultSql: c.dflt_value }));
}

export interface SchemaGaps {
  /** Contract tables (or views) the database does not have. */
  tables: string[];
  /** Contract columns missing from a table the database has, as `table.column`. */
  columns: { table: string; column: ContractColumn }[];
}

/** What the database lacks of the contract; SQLite names are case-insensitive. */
export function findSchemaGaps(db: Db): SchemaGaps {
  const gaps: SchemaGaps = { tables: [], columns: [] };
  for (const [table, wanted] of contractTables()) {
    const present = new Set(columnsOf(db, table).map((c) => c.name.toLowerCase()));
    if (present.size === 0) {
      gaps.tables.push(table);
      continue;
    }
    for (const column of wanted) if (!present.has(column.name.toLowerCase())) gaps.columns.push({ table, column });
  }
  return gaps;
}

/**
 * SQLite adds a NOT NULL column only with a default, and the contract's
 * defaults are what existing rows should read; a NOT NULL column without one
 * is added nullable and must then be filled, as the build refuses NULL there.
 */
function howToAdd(table: string, column: ContractColumn): string {
  const add = `ALTER TABLE ${table} ADD COLUMN ${column.name} ${column.type}`;
  if (column.defaultSql !== null) return `add it: ${add}${column.notNull ? " NOT NULL" : ""} DEFAULT ${column.defaultSql}`;
  if (!column.notNull) return `add it: ${add}`;
  return `add it: ${add}, then give every row a value, as the build refuses a NULL ${column.name}`;
}

/** One line per missing table or column, each with what adds it. */
export function describeGaps(file: string, gaps: SchemaGaps): string {
  const lines = [
    ...gaps.tables.map((table) => `  no table ${table} (cdsnap db migrate --db ${file} creates it empty)`),
    ...gaps.columns.map(({ table, column }) => `  table ${table} has no column ${column.name} (${howToAdd(table, column)})`),
  ];
  const advice =
    gaps.columns.length > 0
      ? "cdsnap never alters the admin tools' tables: add the columns with the tool that owns them"
      : "create the tables with the data contract's CREATE TABLE statements, or run cdsnap db migrate";
  return `database ${file} lacks what the data contract requires:\n${lines.join("\n")}\n${advice}`;
}

/**
 * Opens a database every cdsnap command but `db migrate` works on, refusing
 * (exit 2) one without every contract table and column, each missing one named.
 * Extra tables and columns, another column order and any `user_version` are
 * the admin tools' business.
 *
 * `wal` is for the server alone, and only once the database is accepted: WAL
 * lets a build read a consistent snapshot while the write proxy commits. It is
 * a lasting property of the file (SQLite clients follow it on their own), so
 * nothing else switches it.
 */
export function openContractDatabase(file: string, options: { readonly?: boolean; wal?: boolean } = {}): Db {
  const db = openDatabase(file, { readonly: options.readonly });
  const gaps = findSchemaGaps(db);
  if (gaps.tables.length > 0 || gaps.columns.length > 0) {
    db.close();
    throw new UsageError(describeGaps(file, gaps));
  }
  if (options.wal) db.pragma("journal_mode = WAL");
  return db;
}
