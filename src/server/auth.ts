/**
 * D5: who is calling. Keys and organizations' allowed origins are held in
 * memory, and reloaded when the server's commit watch (db/watch-commits.ts)
 * sees another connection's commit: a revocation made with `cdsnap keys
 * revoke` takes effect within the watch's interval, without restart. A key
 * the memory does not know (or knows as revoked) is looked for again before it
 * is refused: a key created a moment ago works on its very first request.
 */
import { hash, timingSafeEqual } from "node:crypto";
import type { Db } from "../db/open.js";
import { accessReader } from "../db/access.js";
import type { Scope } from "../db/keys.js";
import { httpError } from "../api-errors.js";
import { MAX_KEY_LENGTH } from "../api-http.js";

export interface Caller {
  keyId: string;
  orgId: string;
  scopes: ReadonlySet<Scope>;
}

interface KeyEntry extends Caller {
  hash: Buffer;
  revoked: boolean;
}

export interface AuthCache {
  /** The caller for a presented `x-api-key`, or the D5 error to answer. */
  authenticate(headerValue: string | string[] | undefined): Caller;
  /** null = any origin (D11); otherwise the allowed origins. */
  allowedOrigins(orgId: string): readonly string[] | null;
  /** Reads the keys and origins again, after another connection's commit. */
  reload(): void;
}

export const DEFAULT_AUTH_REFRESH_MS = 250;

/** `lookAgain` brings the memory up to the database (the commit watch's look) before a key is refused. */
export function createAuthCache(db: Db, lookAgain: () => void = () => undefined): AuthCache {
  let keys = new Map<string, KeyEntry>();
  let origins = new Map<string, string[] | null>();
  const readAccess = accessReader(db);

  function reload(): void {
    const access = readAccess();
    const nextKeys = new Map<string, KeyEntry>();
    for (const key of access.keys) {
      if (!/^[0-9a-f]{64}$/.test(key.keySha256)) continue;
      nextKeys.set(key.keySha256, {
        keyId: key.keyId,
        orgId: key.orgId,
        scopes: new Set(key.scopes),
        hash: Buffer.from(key.keySha256, "hex"),
        revoked: key.revoked,
      });
    }
    keys = nextKeys;
    origins = access.allowedOrigins;
  }

  // The map finds the candidate by hash; the final comparison is constant-time.
  function valid(presented: string): KeyEntry | null {
    const entry = keys.get(presented);
    return entry && timingSafeEqual(entry.hash, Buffer.from(presented, "hex")) && !entry.revoked ? entry : null;
  }

  reload();
  return {
    reload,
    authenticate(headerValue) {
      if (typeof headerValue !== "string" || headerValue === "" || headerValue.length > MAX_KEY_LENGTH) {
        throw httpError.unauthorized();
      }
      // The one-shot hex digest costs a third of a Hash object's digest turned into hex.
      const presented = hash("sha256", headerValue, "hex");
      let entry = valid(presented);
      if (!entry) {
        lookAgain();
        entry = valid(presented);
      }
      if (!entry) throw httpError.unauthorized();
      return entry;
    },
    allowedOrigins(orgId) {
      return origins.get(orgId) ?? null;
    },
  };
}
