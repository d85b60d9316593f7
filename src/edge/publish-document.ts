/**
 * Writes the edge document (edge-document.ts) beside the tree:
 * `.<out>.cdsnap/edge.json`. The build writes it after every build (a no-op
 * build too: keys may have changed since), `cdsnap keys create` and `revoke`
 * write it again when they know the tree (`--out`), and so does `cdsnap edge
 * keys` after any other change of keys or allowed origins, and `serve`
 * after PATCHes. It is read from the database's keys and organizations and
 * from the live generation's page membership and organization files; it is
 * replaced by one rename, so a reader sees the old document or the new, and
 * only when its content changed.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { openContractDatabase } from "../db/contract-schema.js";
import { accessReader } from "../db/access.js";
import type { Db } from "../db/open.js";
import { writeFileAtomicSync } from "../emit/atomic-write.js";
import { fileOf } from "../api-paths.js";
import { liveGenerationSync, pagesFileOf, treeStoreOf, type Generation, type TreeStore } from "../emit/tree-store.js";
import type { PageMembership } from "../render/blocks.js";
import { EDGE_DOCUMENT_FORMAT, type EdgeDocument, type EdgeOrganization } from "./edge-document.js";

/** Where the edge document of a tree lives. */
export function edgeDocumentFileOf(out: string): string {
  return path.join(treeStoreOf(out).stateDir, "edge.json");
}

/**
 * The organization file as the live tree holds it: the bytes the build
 * audited, or the write proxy rewrote after a PATCH. Null when there is none.
 */
function organizationFileOf(live: Generation, orgId: string): string | null {
  try {
    return readFileSync(path.join(live.tree, fileOf({ kind: "organization", orgId })), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** The edge document of the database and the live generation of `store`, its keys salted with `salt`. */
export function edgeDocumentOf(db: Db, store: TreeStore, salt: string, now = new Date()): EdgeDocument {
  const live = liveGenerationSync(store);
  const access = accessReader(db)();
  const organizations: Record<string, EdgeOrganization> = {};
  for (const [orgId, allowedOrigins] of access.allowedOrigins) {
    let pages: PageMembership = {};
    const file = live ? pagesFileOf(live, orgId) : null;
    if (file && existsSync(file)) pages = JSON.parse(readFileSync(file, "utf8")) as PageMembership;
    organizations[orgId] = { allowedOrigins, pages, file: live ? organizationFileOf(live, orgId) : null };
  }
  return {
    format: EDGE_DOCUMENT_FORMAT,
    generation: live?.id ?? null,
    writtenAt: now.toISOString(),
    salt,
    // Listed field by field: a column added to api_keys later must not reach the edge unless named here.
    keys: access.keys.map((key) => ({
      digest: createHash("sha256").update(`${salt}${key.keySha256}`).digest("hex"),
      keyId: key.keyId,
      orgId: key.orgId,
      scopes: key.scopes,
      revoked: key.revoked,
    })),
    organizations,
  };
}

function readCurrent(file: string): EdgeDocument | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as EdgeDocument;
  } catch (error) {
    // None yet, or one cut short (a copy made by hand): it is written anew. Anything else (EACCES) is said.
    if (error instanceof SyntaxError || (error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

const serialized = (doc: EdgeDocument) => `${JSON.stringify(doc, null, 1)}\n`;

const sameContent = (current: EdgeDocument | null, next: EdgeDocument) =>
  current !== null && JSON.stringify({ ...current, writtenAt: "" }) === JSON.stringify({ ...next, writtenAt: "" });

/**
 * Writes the edge document of `out` and returns its path; null (and nothing
 * written) when `out` holds no tree a build published.
 */
export function writeEdgeDocument(db: Db, out: string, now = new Date()): string | null {
  const store = treeStoreOf(out);
  const file = edgeDocumentFileOf(out);
  // Several processes write it (a build, serve after a PATCH, the keys
  // commands): one that read the generation a build has since replaced may
  // rename its document over the build's. Whoever sees the generation change
  // under it writes again, so the last document written names the live one.
  for (let attempt = 0; attempt < 3; attempt++) {
    const live = liveGenerationSync(store);
    if (!live) return null;
    const current = readCurrent(file);
    // The salt stays: a document whose keys did not change has the same digests.
    const salt = current && /^[0-9a-f]{64}$/.test(current.salt) ? current.salt : randomBytes(32).toString("hex");
    const next = edgeDocumentOf(db, store, salt, now);
    // Unchanged but for its time, it stays as it is: a build that changed nothing touches no file, and a deploy has nothing to upload.
    if (!sameContent(current, next)) writeFileAtomicSync(file, serialized(next));
    if (liveGenerationSync(store)?.id === live.id) break;
  }
  return file;
}

/** {@link writeEdgeDocument} with the database file opened (read-only) for it. */
export function writeEdgeDocumentOf(dbFile: string, out: string, now = new Date()): string | null {
  const db = openContractDatabase(dbFile, { readonly: true });
  try {
    return writeEdgeDocument(db, out, now);
  } finally {
    db.close();
  }
}

/** The file's identity: a rename puts a new inode in its place, so a document another process wrote is seen. */
function identityOf(file: string): string | null {
  const info = statSync(file, { throwIfNoEntry: false });
  return info ? `${info.ino}:${info.mtimeMs}:${info.size}` : null;
}

/**
 * Keeps the edge document current for `serve` after PATCHes rewrote
 * organization files (the document carries them to the edge). Before the
 * `--on-change` command hears of the change, so that the command finds the
 * new document to put where the edge reads it.
 *
 * A PATCH batch changes only the files of its organizations: those are read
 * again into the document as last read or written here, which is read anew
 * only when another process replaced it. Reading every organization's files
 * and comparing whole documents, as a full write does, cost a PATCH 36 ms of
 * its 39 at 500 organizations. A document of another generation (a build
 * swapped meanwhile), or without one of the organizations, is written whole.
 * A failure is reported, not thrown: the PATCH is committed and its file
 * written whatever becomes of the document.
 */
export function edgeDocumentWriter(db: Db, out: string, onError: (error: unknown) => void): (orgIds: readonly string[]) => void {
  const store = treeStoreOf(out);
  const file = edgeDocumentFileOf(out);
  let known: { doc: EdgeDocument | null; identity: string | null } = { doc: null, identity: null };
  function update(orgIds: readonly string[]): void {
    const live = liveGenerationSync(store);
    if (!live) return;
    const identity = identityOf(file);
    if (identity !== known.identity) known = { doc: readCurrent(file), identity };
    const { doc } = known;
    if (!doc || doc.generation !== live.id || !orgIds.every((orgId) => doc.organizations[orgId])) {
      writeEdgeDocument(db, out);
      known = { doc: null, identity: null };
      return;
    }
    for (const orgId of orgIds) doc.organizations[orgId]!.file = organizationFileOf(live, orgId);
    doc.writtenAt = new Date().toISOString();
    writeFileAtomicSync(file, serialized(doc));
    known.identity = identityOf(file);
    // A build swapped while this was written: its document, or a whole one, must be the last.
    if (liveGenerationSync(store)?.id !== live.id) writeEdgeDocument(db, out);
  }
  return (orgIds) => {
    try {
      update(orgIds);
    } catch (error) {
      onError(error);
    }
  };
}
