/**
 * Notices, without waiting for a request, that who may read an organization's
 * answers has changed: a key revoked, deleted or replaced, or the
 * organization's allowed origins edited (by `cdsnap keys`, or any other
 * writer of the database). The origin refuses such a caller at once (auth.ts),
 * but a cache in front of it keeps serving the answers it stored for that key
 * or origin (they vary by both) until they expire: the on-change hook is told,
 * so it can purge them. A new key needs no purge: nothing is cached for it.
 */
import type { Db } from "../db/open.js";

interface Readers {
  /** The keys that may read, as id and hash (a key whose hash changed is another key). */
  keys: Set<string>;
  allowedOrigins: string | null;
}

export interface AccessWatch {
  stop(): void;
}

/** Checks SQLite's data_version every `intervalMs` and calls `onChange` with the organizations whose readers lost someone. */
export function watchAccess(db: Db, intervalMs: number, onChange: (orgIds: string[]) => void): AccessWatch {
  const dataVersion = db.prepare("PRAGMA data_version").pluck();
  const selectKeys = db.prepare("SELECT id, org_id, key_sha256 FROM api_keys WHERE revoked_at IS NULL");
  const selectOrgs = db.prepare("SELECT id, allowed_origins FROM organizations");

  const read = db.transaction((): Map<string, Readers> => {
    const readers = new Map<string, Readers>();
    for (const row of selectOrgs.all() as { id: string; allowed_origins: string | null }[]) {
      readers.set(row.id, { keys: new Set(), allowedOrigins: row.allowed_origins });
    }
    for (const row of selectKeys.all() as { id: string; org_id: string; key_sha256: string }[]) {
      readers.get(row.org_id)?.keys.add(`${row.id} ${row.key_sha256}`);
    }
    return readers;
  });

  let version = dataVersion.get();
  let readers = read();
  const timer = setInterval(() => {
    const current = dataVersion.get();
    if (current === version) return;
    version = current;
    const next = read();
    const changed = [...readers].filter(([orgId, before]) => {
      const after = next.get(orgId);
      return !after || after.allowedOrigins !== before.allowedOrigins || [...before.keys].some((key) => !after.keys.has(key));
    });
    readers = next;
    if (changed.length > 0) onChange(changed.map(([orgId]) => orgId));
  }, intervalMs);
  // The watch never keeps a process alive on its own.
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
