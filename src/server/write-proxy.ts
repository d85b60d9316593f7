/**
 * The two PATCH endpoints (interface §4, D6, D7). The body is read and
 * validated before any lock is taken, so a slow or hostile client never holds
 * one. Then one BEGIN IMMEDIATE transaction stores the value, and a second one
 * re-renders the organization file from the database and renames it into place
 * (emit/organization-file.ts). A refused PATCH touches neither.
 */
import type { Route } from "../api-paths.js";
import { storeBusinessDescription, storeBusinessOffers } from "../db/business-store.js";
import type { Db } from "../db/open.js";
import { readOrganization } from "../db/read-snapshot.js";
import { refreshOrganizationFile } from "../emit/organization-file.js";
import { fileBytes } from "../emit/emit-tree.js";
import type { TreeStore } from "../emit/tree-store.js";
import type { ErrorDetail } from "../errors.js";
import { businessDescriptionBody, businessOffersBody } from "../model/business.js";
import { renderOrganization } from "../render/organization.js";
import { etagOf } from "./file-cache.js";
import { httpError } from "./http-errors.js";
import { parseJsonBody } from "./json-body.js";
import { readBody } from "./read-body.js";
import { sendJson, type Exchange } from "./respond.js";
import { z } from "zod";

function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(";").map((p) => p.trim().toLowerCase());
  if (type !== "application/json") return false;
  return params.every((p) => p === "" || p === "charset=utf-8" || p === 'charset="utf-8"');
}

function detailsOf(error: z.ZodError): ErrorDetail[] {
  return error.issues.flatMap((issue): ErrorDetail[] => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: [...issue.path, key].join("."), message: "is not a known property" }));
    }
    return [{ path: issue.path.map(String).join("."), message: issue.message }];
  });
}

export interface WriteProxy {
  patch(ex: Exchange, route: Extract<Route, { kind: "businessDescription" | "businessOffers" }>): Promise<void>;
}

export function createWriteProxy(db: Db, store: TreeStore): WriteProxy {
  function currentEtag(orgId: string): string | null {
    const { record } = readOrganization(db, orgId);
    return record ? etagOf(fileBytes(renderOrganization(record))) : null;
  }

  return {
    async patch(ex, route) {
      if (!isJsonContentType(ex.req.headers["content-type"])) throw httpError.unsupportedMediaType();
      const json = parseJsonBody(await readBody(ex.req));
      const ifMatch = ex.req.headers["if-match"];

      const { orgId } = route;
      let stored: Record<string, unknown>;
      if (route.kind === "businessDescription") {
        const parsed = businessDescriptionBody.safeParse(json);
        if (!parsed.success) throw httpError.validationFailed(detailsOf(parsed.error));
        db.transaction(() => {
          checkIfMatch(ifMatch, currentEtag(orgId));
          storeBusinessDescription(db, orgId, parsed.data.businessDescription);
        }).immediate();
        stored = parsed.data;
      } else {
        const parsed = businessOffersBody.safeParse(json);
        if (!parsed.success) throw httpError.validationFailed(detailsOf(parsed.error));
        db.transaction(() => {
          checkIfMatch(ifMatch, currentEtag(orgId));
          storeBusinessOffers(db, orgId, parsed.data.businessOffers);
        }).immediate();
        stored = parsed.data;
      }

      // The stored value is the validated one (trimmed, CR LF folded, null links dropped).
      const refreshed = refreshOrganizationFile(db, store, orgId);
      sendJson(ex, 200, stored, refreshed ? { ETag: etagOf(fileBytes(refreshed.organization)) } : {});
    },
  };
}

/** `If-Match` on the organization's ETag: `*` or a listed tag passes, anything else is stale. */
function checkIfMatch(header: string | undefined, current: string | null): void {
  if (header === undefined) return;
  if (header.trim() === "*" && current !== null) return;
  const tags = header.split(",").map((t) => t.trim());
  if (current === null || !tags.includes(current)) throw httpError.preconditionFailed();
}
