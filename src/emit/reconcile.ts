import { pathOf } from "../api-paths.js";
import { openDatabase } from "../db/open.js";
import { refreshOrganizationFiles } from "./organization-file.js";
import type { TreeStore } from "./tree-store.js";

// SQLITE_READONLY, or an extended code of it (SQLITE_READONLY_DIRECTORY when a WAL file's folder is read-only).
const isReadOnly = (error: unknown) => /^SQLITE_READONLY(_|$)/.test(String((error as { code?: unknown }).code));

/**
 * D14, the build's side: a PATCH committed after the build read its snapshot
 * must not be undone by the swap, so after swapping, each organization file is
 * brought up to its row under the database's write lock. A database this
 * process cannot write has no write proxy writing it either; then there is
 * nothing to reconcile. Returns the API paths it rewrote.
 */
export async function reconcileOrganizationFiles(
  dbFile: string,
  store: TreeStore,
  orgIds: readonly string[],
): Promise<string[]> {
  const rewritten: string[] = [];
  let db;
  try {
    db = openDatabase(dbFile);
  } catch (error) {
    if (!isReadOnly(error)) throw error;
    return rewritten;
  }
  try {
    for (const [orgId, result] of refreshOrganizationFiles(db, store, orgIds)) {
      if (result?.written) rewritten.push(pathOf({ kind: "organization", orgId }));
    }
  } catch (error) {
    if (!isReadOnly(error)) throw error;
  } finally {
    db.close();
  }
  return rewritten;
}
