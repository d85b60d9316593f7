/**
 * The two PATCH endpoints (interface §4, D6, D7). The body is read and
 * validated before any lock is taken, so a slow or hostile client never holds
 * one. Validated writes then go through a group commit: the PATCHes ready in
 * one turn of the event loop share one BEGIN IMMEDIATE transaction and its one
 * commit, each in a savepoint of its own so that a refused one (412) rolls back
 * alone. A second transaction then re-renders each changed organization file
 * from the database and renames it into place (emit/organization-file.ts). A
 * refused PATCH touches neither.
 */
import type { IncomingMessage } from "node:http";
import type { WriteRoute } from "../route-table.js";
import { storeBusinessDescription, storeBusinessOffers } from "../db/business-store.js";
import type { Db } from "../db/open.js";
import { readOrganization } from "../db/read-snapshot.js";
import { refreshOrganizationFiles, type RefreshResult } from "../emit/organization-file.js";
import { fileBytes } from "../emit/file-bytes.js";
import type { TreeStore } from "../emit/tree-store.js";
import type { ErrorDetail } from "../errors.js";
import { businessDescriptionBody, businessOffersBody } from "../model/business.js";
import { renderOrganization } from "../render/organization.js";
import { fileEtagOf } from "../content-coding.js";
import { patchChange, type Change } from "../on-change/change-set.js";
import { etagOf } from "./file-cache.js";
import { createGroupCommit, type Outcome } from "./group-commit.js";
import { httpError } from "../api-errors.js";
import { parseJsonBody } from "./json-body.js";
import { checkDeclaredLength, readBody } from "./read-body.js";
import { countHeader } from "./request-head.js";
import { sendJson, type Exchange } from "./respond.js";
import { z } from "zod";

/** One Content-Type, JSON in UTF-8: of two, each reader on the way may believe another one (Node keeps the first). */
function isJsonContentType(req: IncomingMessage): boolean {
  const header = req.headers["content-type"];
  if (!header || countHeader(req.rawHeaders, "content-type") !== 1) return false;
  const [type, ...params] = header.split(";").map((p) => p.trim().toLowerCase());
  if (type !== "application/json") return false;
  return params.every((p) => p === "" || p === "charset=utf-8" || p === 'charset="utf-8"');
}

/** True when the member at `path` is absent from an object that is there (zod says "received undefined"). */
function isMissing(body: unknown, path: readonly PropertyKey[]): boolean {
  let parent = body;
  for (const key of path.slice(0, -1)) {
    if (typeof parent !== "object" || parent === null) return false;
    parent = (parent as Record<PropertyKey, unknown>)[key];
  }
  const last = path.at(-1);
  return typeof parent === "object" && parent !== null && !Array.isArray(parent) && last !== undefined && !Object.hasOwn(parent, last);
}

function detailsOf(error: z.ZodError, body: unknown): ErrorDetail[] {
  return error.issues.flatMap((issue): ErrorDetail[] => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: [...issue.path, key].join("."), message: "is not a known property" }));
    }
    // An absent member gets an issue only when it is required, whatever the issue's code.
    const missing = isMissing(body, issue.path);
    return [{ path: issue.path.map(String).join("."), message: missing ? "is required" : issue.message }];
  });
}

export interface WriteProxy {
  patch(ex: Exchange, route: WriteRoute): Promise<void>;
  /** Commits the PATCHes still queued, before the database closes. */
  flush(): void;
}

interface PendingWrite {
  orgId: string;
  ifMatch: string | undefined;
  write(): void;
}

/** `onChange` hears of the organization files each group commit rewrote, before the PATCHes are answered. */
export function createWriteProxy(db: Db, store: TreeStore, onChange?: (change: Change) => void): WriteProxy {
  const commits = createGroupCommit(batchCommit(db, store, onChange));

  return {
    async patch(ex, route) {
      if (!isJsonContentType(ex.req)) throw httpError.unsupportedMediaType();
      checkDeclaredLength(ex.req);
      // Every refusal the headers alone decide has been made: a client waiting for 100 Continue may send its body.
      if (ex.awaitingContinue) ex.res.writeContinue();
      const json = parseJsonBody(await readBody(ex.req));
      const ifMatch = ex.req.headers["if-match"];
      const { stored, write } = validWrite(db, route, json);
      const etag = await commits.submit({ orgId: route.orgId, ifMatch, write });
      // The stored value is the validated one (trimmed, CR LF folded, null links dropped).
      sendJson(ex, 200, stored, etag ? { ETag: etag } : {});
    },
    flush: commits.flush,
  };
}

/** The body's validated value, and the write that stores it; a body that does not validate is refused with its details (D6). */
function validWrite(db: Db, route: WriteRoute, json: unknown): { stored: Record<string, unknown>; write: () => void } {
  const { orgId } = route;
  if (route.kind === "businessDescription") {
    const parsed = businessDescriptionBody.safeParse(json);
    if (!parsed.success) throw httpError.validationFailed(detailsOf(parsed.error, json));
    const value = parsed.data.businessDescription;
    return { stored: parsed.data, write: () => storeBusinessDescription(db, orgId, value) };
  }
  const parsed = businessOffersBody.safeParse(json);
  if (!parsed.success) throw httpError.validationFailed(detailsOf(parsed.error, json));
  const value = parsed.data.businessOffers;
  return { stored: parsed.data, write: () => storeBusinessOffers(db, orgId, value) };
}

/**
 * The group commit's batch: every write in one transaction, then the changed
 * organizations' files rewritten. The outcome of each write is the ETag its
 * response carries (null: none, as when the org has no file).
 */
function batchCommit(db: Db, store: TreeStore, onChange?: (change: Change) => void): (writes: readonly PendingWrite[]) => Outcome<string | null>[] {
  function currentEtag(orgId: string): string | null {
    const { record } = readOrganization(db, orgId);
    return record ? etagOf(fileBytes(renderOrganization(record))) : null;
  }

  // Runs as a savepoint of the batch's transaction. The ETag is the state this
  // write produced, not the batch's last: sent back as If-Match, it then fails
  // when a later write of the same batch changed the organization.
  const apply = db.transaction((pending: PendingWrite): string | null => {
    if (pending.ifMatch !== undefined) checkIfMatch(pending.ifMatch, currentEtag(pending.orgId));
    pending.write();
    return currentEtag(pending.orgId);
  });

  function tryApply(pending: PendingWrite): Outcome<string | null> {
    try {
      return { ok: true, value: apply(pending) };
    } catch (error) {
      // An I/O error or a full disk can make SQLite roll back the whole
      // transaction, not just the savepoint: then no write of the batch stands.
      if (!db.inTransaction) throw error;
      return { ok: false, error };
    }
  }

  const applyAll = db.transaction((writes: readonly PendingWrite[]) => writes.map(tryApply));

  return function commit(writes) {
    const applied = applyAll.immediate(writes);
    const changed = new Set(writes.filter((_, i) => applied[i]!.ok).map((w) => w.orgId));
    let refreshed: Map<string, RefreshResult | null>;
    try {
      refreshed = refreshOrganizationFiles(db, store, changed);
    } catch (error) {
      // The writes stand but their file is stale (the next write or the server's start repairs it): they answer the error.
      return applied.map((outcome) => (outcome.ok ? { ok: false, error } : outcome));
    }
    const rewritten = [...refreshed].filter(([, result]) => result?.written).map(([orgId]) => orgId);
    if (onChange && rewritten.length > 0) onChange(patchChange(rewritten));
    return applied.map((outcome, i) => {
      if (!outcome.ok || refreshed.get(writes[i]!.orgId)) return outcome;
      // No file in the live tree (or a row that does not validate): nothing served carries an ETag.
      return { ok: true, value: null };
    });
  };
}

/**
 * `If-Match` on the organization's ETag: `*` or a listed tag passes, anything
 * else is stale. The ETag of a compressed GET answer names the same version.
 */
function checkIfMatch(header: string | undefined, current: string | null): void {
  if (header === undefined) return;
  if (header.trim() === "*" && current !== null) return;
  const tags = header.split(",").map(fileEtagOf);
  if (current === null || !tags.includes(current)) throw httpError.preconditionFailed();
}
