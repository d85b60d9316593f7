/**
 * Keeps an organization's `organization` file equal to its database row. The
 * write proxy calls this after each group commit of PATCHes, the server on
 * start, and the build after its swap (D14). Each call holds SQLite's write
 * lock (BEGIN IMMEDIATE) from reading the rows to renaming the files, so
 * concurrent callers in any process rename in commit order and the last file
 * written is the latest row.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileOf } from "../api-paths.js";
import { readOrganization } from "../db/read-snapshot.js";
import type { Db } from "../db/open.js";
import type { Organization } from "../model/api.js";
import { renderOrganization } from "../render/organization.js";
import { writeFileAtomicSync } from "./atomic-write.js";
import { fileBytes } from "./file-bytes.js";
import { liveGenerationSync, type TreeStore } from "./tree-store.js";

export interface RefreshResult {
  organization: Organization;
  /** The file's bytes changed (false when it already matched). */
  written: boolean;
}

/**
 * Re-renders each organization's file from the database and replaces it when
 * its bytes differ, all under one write lock. An organization maps to null when
 * it has no file in the live tree (not built yet) or its row does not validate
 * (the next build reports why).
 */
export function refreshOrganizationFiles(
  db: Db,
  store: TreeStore,
  orgIds: Iterable<string>,
): Map<string, RefreshResult | null> {
  return db
    .transaction(() => {
      const gen = liveGenerationSync(store);
      const results = new Map<string, RefreshResult | null>();
      for (const orgId of orgIds) results.set(orgId, gen ? refreshIn(db, gen.tree, orgId) : null);
      return results;
    })
    .immediate();
}

function refreshIn(db: Db, tree: string, orgId: string): RefreshResult | null {
  const file = path.join(tree, fileOf({ kind: "organization", orgId }));
  if (!existsSync(file)) return null;
  const { record, problems } = readOrganization(db, orgId);
  if (!record || problems.length > 0) return null;
  const organization = renderOrganization(record);
  const bytes = fileBytes(organization);
  const written = !readFileSync(file).equals(bytes);
  if (written) writeFileAtomicSync(file, bytes);
  return { organization, written };
}
