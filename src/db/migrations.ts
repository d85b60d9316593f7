/**
 * Schema migrations, applied in order and recorded in `PRAGMA user_version`.
 * Migration 1 is data-contract.md verbatim: the admin tools own those names.
 * Later ones hold the project's own additions; never edit a released one.
 */
import type { Database } from "better-sqlite3";

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE organizations(
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    slug TEXT NOT NULL UNIQUE,
    google_analytics_id TEXT,
    meta_pixel_id TEXT,
    gtm_container_id TEXT,
    business_description TEXT NOT NULL DEFAULT '',
    allowed_origins TEXT
  );
  CREATE TABLE organization_secrets(
    org_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (org_id, name)
  );
  CREATE TABLE business_offers(
    org_id TEXT NOT NULL REFERENCES organizations(id),
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    link TEXT,
    PRIMARY KEY (org_id, position)
  );
  CREATE TABLE api_keys(
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    key_sha256 TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    label TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  );
  CREATE TABLE categories(
    org_id TEXT NOT NULL REFERENCES organizations(id),
    id TEXT NOT NULL,
    slug TEXT NOT NULL,
    value TEXT NOT NULL,
    position INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, id), UNIQUE (org_id, slug)
  );
  CREATE TABLE blocks(
    org_id TEXT NOT NULL REFERENCES organizations(id),
    id TEXT NOT NULL,
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    position INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, id), UNIQUE (org_id, slug)
  );
  CREATE TABLE block_fields(
    org_id TEXT NOT NULL,
    block_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    key TEXT NOT NULL,
    type TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (org_id, block_id, position),
    FOREIGN KEY (org_id, block_id) REFERENCES blocks(org_id, id)
  );
  CREATE TABLE block_pages(
    org_id TEXT NOT NULL,
    block_id TEXT NOT NULL,
    page TEXT NOT NULL,
    PRIMARY KEY (org_id, block_id, page),
    FOREIGN KEY (org_id, block_id) REFERENCES blocks(org_id, id)
  );
  `,
  // The key check looks keys up by hash (UNIQUE gives that index); listing by
  // organization is the other access path.
  `CREATE INDEX api_keys_org ON api_keys(org_id);`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Applies every pending migration in one transaction; returns how many ran. */
export function migrate(db: Database): number {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `the database is at schema version ${current}, newer than this cdsnap (${SCHEMA_VERSION}); upgrade cdsnap`,
    );
  }
  const pending = MIGRATIONS.slice(current);
  db.transaction(() => {
    for (const sql of pending) db.exec(sql);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
  return pending.length;
}
