/**
 * The edge document: what the read API needs besides the tree, published by
 * the build beside it (`.<out>.cdsnap/edge.json`, never inside the tree a CDN
 * serves). Per key its SHA-256, organization, scopes and whether it is
 * revoked (never the raw key, which nothing stores); per organization its
 * allowed origins (D11) and page membership (D8). Nothing of
 * organization_secrets is in it.
 *
 * Neutral: the edge handler reads it on Workers as well as under Node.
 */
import type { PageMembership } from "../render/blocks.js";

export const EDGE_DOCUMENT_FORMAT = 1;

export type EdgeScope = "read" | "write";

export interface EdgeKey {
  /** Lowercase hex SHA-256 of the raw key. */
  sha256: string;
  keyId: string;
  orgId: string;
  scopes: EdgeScope[];
  revoked: boolean;
}

export interface EdgeOrganization {
  /** null: any origin (D11). */
  allowedOrigins: string[] | null;
  /** D8 membership of the live generation: page name → block ids. */
  pages: PageMembership;
}

export interface EdgeDocument {
  format: typeof EDGE_DOCUMENT_FORMAT;
  /** The generation whose page membership it holds; null before the first build. */
  generation: string | null;
  /** When it was written (ISO 8601): how stale an edge's copy is. */
  writtenAt: string;
  keys: EdgeKey[];
  organizations: Record<string, EdgeOrganization>;
}

/** The document indexed for the handler. */
export interface EdgeDirectory {
  readonly writtenAt: string;
  key(sha256: string): EdgeKey | undefined;
  organization(orgId: string): EdgeOrganization | undefined;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Reads a document's text; throws when it is not one this handler understands. */
export function readEdgeDocument(text: string): EdgeDirectory {
  const doc = JSON.parse(text) as Partial<EdgeDocument>;
  if (doc === null || typeof doc !== "object" || doc.format !== EDGE_DOCUMENT_FORMAT) {
    throw new Error(`the edge document is not of format ${EDGE_DOCUMENT_FORMAT}; write it again with this version of cdsnap`);
  }
  if (!Array.isArray(doc.keys) || doc.organizations === null || typeof doc.organizations !== "object") {
    throw new Error("the edge document has no keys or no organizations");
  }
  const keys = new Map<string, EdgeKey>();
  for (const key of doc.keys) if (SHA256_HEX.test(key.sha256)) keys.set(key.sha256, key);
  const organizations = new Map(Object.entries(doc.organizations));
  return {
    writtenAt: String(doc.writtenAt),
    key: (sha256) => keys.get(sha256),
    organization: (orgId) => organizations.get(orgId),
  };
}
