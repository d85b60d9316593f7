/**
 * API keys (D5): stored only as the lowercase hex SHA-256 of the raw key; the
 * raw key exists once, in the return value of createKey.
 */
import { createHash, randomBytes } from "node:crypto";
import { UsageError } from "../errors.js";
import type { Db } from "./open.js";

/**
 * `read`: every GET; `write`: the two PATCHes too; `preview`: the reads
 * answered from the preview tree (drafts and scheduled posts), where there is one.
 */
export type Scope = "read" | "write" | "preview";

/** The order scopes are spelled in: `read`, `read write`, `read preview`, `read write preview`. */
const SCOPES: readonly Scope[] = ["read", "write", "preview"];

const inOrder = (scopes: Iterable<Scope>): Scope[] => {
  const held = new Set(scopes);
  return SCOPES.filter((scope) => held.has(scope));
};

export interface KeyRecord {
  id: string;
  orgId: string;
  keySha256: string;
  scopes: Scope[];
  label: string | null;
  createdAt: string;
  revokedAt: string | null;
}

export function hashKey(raw: string): string {
  return createHash("sha256").update(raw, "utf8").digest("hex");
}

/** Parses `read`, `read,write`, `read,preview`, `read write preview`; every key can read. */
export function parseScopes(text: string): Scope[] {
  const words = text.split(/[\s,]+/).filter(Boolean);
  const scopes = new Set<Scope>(["read"]);
  for (const word of words) {
    if (!(SCOPES as readonly string[]).includes(word)) {
      throw new UsageError(`unknown scope "${word}"; use read, read,write, read,preview or read,write,preview`);
    }
    scopes.add(word as Scope);
  }
  return inOrder(scopes);
}

/**
 * The scopes an `api_keys.scopes` value grants: every key reads, writes
 * when `write` is one of its space-separated words, and reads the preview
 * tree when `preview` is. Other words grant nothing, so `'read,write'` is a read key.
 */
export function scopesOf(column: string): Scope[] {
  const words = column.split(" ");
  return inOrder(["read", ...SCOPES.filter((scope) => scope !== "read" && words.includes(scope))]);
}

/** Scopes as the database spells them, and as `keys` prints them: `read`, `read write`, `read preview`, `read write preview`. */
export function spellScopes(scopes: readonly Scope[]): string {
  return inOrder(scopes).join(" ");
}

interface KeyRow {
  id: string;
  org_id: string;
  key_sha256: string;
  scopes: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

function toRecord(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    keySha256: row.key_sha256,
    scopes: scopesOf(row.scopes),
    label: row.label,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

const COLUMNS = "id, org_id, key_sha256, scopes, label, created_at, revoked_at";

export function listKeys(db: Db, orgId?: string): KeyRecord[] {
  const rows = orgId
    ? db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE org_id = ? ORDER BY created_at, id`).all(orgId)
    : db.prepare(`SELECT ${COLUMNS} FROM api_keys ORDER BY org_id, created_at, id`).all();
  return (rows as KeyRow[]).map(toRecord);
}

export interface CreatedKey {
  record: KeyRecord;
  /** Shown once to the person who created it; never stored. */
  rawKey: string;
}

export function createKey(db: Db, options: { orgId: string; scopes: Scope[]; label?: string; now?: Date }): CreatedKey {
  if (!db.prepare("SELECT 1 FROM organizations WHERE id = ?").get(options.orgId)) {
    throw new UsageError(`no organization has the id "${options.orgId}"`);
  }
  const rawKey = `cds_${randomBytes(24).toString("base64url")}`;
  const id = `key_${randomBytes(6).toString("hex")}`;
  const row: KeyRow = {
    id,
    org_id: options.orgId,
    key_sha256: hashKey(rawKey),
    scopes: spellScopes(options.scopes),
    label: options.label ?? null,
    created_at: (options.now ?? new Date()).toISOString(),
    revoked_at: null,
  };
  db.prepare(
    "INSERT INTO api_keys (id, org_id, key_sha256, scopes, label, created_at, revoked_at) VALUES (@id, @org_id, @key_sha256, @scopes, @label, @created_at, @revoked_at)",
  ).run(row);
  return { record: toRecord(row), rawKey };
}

/** Marks a key revoked; revoking twice keeps the first instant. */
export function revokeKey(db: Db, id: string, now = new Date()): KeyRecord {
  const info = db.prepare("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?").run(now.toISOString(), id);
  if (info.changes === 0) throw new UsageError(`no API key has the id "${id}"; see cdsnap keys list`);
  return toRecord(db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`).get(id) as KeyRow);
}
