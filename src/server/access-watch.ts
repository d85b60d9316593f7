/**
 * Notices, without waiting for a request, that who may read an organization's
 * answers has changed: a key revoked, deleted or replaced, or the
 * organization's allowed origins edited (by `cdsnap keys`, or any other
 * writer of the database). The origin refuses such a caller at once (auth.ts),
 * but a cache in front of it keeps serving the answers it stored for that key
 * or origin (they vary by both) until they expire: the on-change hook is told,
 * so it can purge them. A new key needs no purge: nothing is cached for it.
 */
import { accessReader } from "../db/access.js";
import type { Db } from "../db/open.js";

interface Readers {
  /** The keys that may read, as id and hash (a key whose hash changed is another key). */
  keys: Set<string>;
  /** Revoked keys' ids: one revoked since the last look is news even if that look never saw it valid. */
  revoked: Set<string>;
  /** As JSON: one spelled anew but allowing the same origins loses no one. */
  allowedOrigins: string;
}

export interface AccessWatch {
  /** Called on another connection's commit (db/watch-commits.ts). */
  onCommit(): void;
}

/**
 * Calls `onChange` with the organizations whose readers lost someone since the
 * last commit looked at. A key created and revoked between two looks counts:
 * the origin may have served it in between.
 */
export function watchAccess(db: Db, onChange: (orgIds: string[]) => void): AccessWatch {
  const readAccess = accessReader(db);

  function read(): Map<string, Readers> {
    const access = readAccess();
    const readers = new Map<string, Readers>();
    for (const [orgId, origins] of access.allowedOrigins) readers.set(orgId, { keys: new Set(), revoked: new Set(), allowedOrigins: JSON.stringify(origins) });
    for (const key of access.keys) {
      const org = readers.get(key.orgId);
      if (key.revoked) org?.revoked.add(key.keyId);
      else org?.keys.add(`${key.keyId} ${key.keySha256}`);
    }
    return readers;
  }

  function lostReaders(before: Readers, after: Readers | undefined): boolean {
    if (!after || after.allowedOrigins !== before.allowedOrigins) return true;
    for (const key of before.keys) if (!after.keys.has(key)) return true;
    for (const id of after.revoked) if (!before.revoked.has(id)) return true;
    return false;
  }

  let readers = read();
  return {
    onCommit() {
      const next = read();
      const changed = [...readers].filter(([orgId, before]) => lostReaders(before, next.get(orgId))).map(([orgId]) => orgId);
      readers = next;
      if (changed.length > 0) onChange(changed);
    },
  };
}
