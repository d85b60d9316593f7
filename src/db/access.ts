/**
 * Who may read what, as the database says now (D5, D11): every key (its id,
 * organization, SHA-256, scopes, whether it is revoked) and each
 * organization's allowed origins, read in one transaction. The server's key
 * check (server/auth.ts), its watch for readers lost (server/access-watch.ts)
 * and the edge document (edge/publish-document.ts) are projections of it.
 */
import { parseAllowedOrigins } from "../api-reads.js";
import { scopesOf, type Scope } from "./keys.js";
import type { Db } from "./open.js";

export interface AccessKey {
  keyId: string;
  orgId: string;
  /** Lowercase hex, as stored; a row that holds anything else is no key anyone can present. */
  keySha256: string;
  scopes: Scope[];
  revoked: boolean;
}

export interface Access {
  keys: AccessKey[];
  /** Every organization: null = any origin. */
  allowedOrigins: Map<string, string[] | null>;
}

/** A reader of the database's access, its statements prepared once. */
export function accessReader(db: Db): () => Access {
  const selectKeys = db.prepare("SELECT id, org_id, key_sha256, scopes, revoked_at FROM api_keys ORDER BY org_id, created_at, id");
  const selectOrgs = db.prepare("SELECT id, allowed_origins FROM organizations ORDER BY id");
  return db.transaction((): Access => {
    const rows = selectKeys.all() as { id: string; org_id: string; key_sha256: string; scopes: string; revoked_at: string | null }[];
    const orgs = selectOrgs.all() as { id: string; allowed_origins: string | null }[];
    return {
      keys: rows.map((row) => ({
        keyId: row.id,
        orgId: row.org_id,
        keySha256: row.key_sha256,
        scopes: scopesOf(row.scopes),
        revoked: row.revoked_at !== null,
      })),
      allowedOrigins: new Map(orgs.map((row) => [row.id, parseAllowedOrigins(row.allowed_origins)])),
    };
  });
}
