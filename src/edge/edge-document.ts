/**
 * The edge document: what the read API needs besides the tree, published by
 * the build beside it (`.<out>.cdsnap/edge.json`, never inside the tree a CDN
 * serves). Per key a salted digest, its organization, scopes and whether it is
 * revoked; per organization its allowed origins (D11) and page membership
 * (D8). Never a raw key (nothing stores one), nothing of
 * organization_secrets, and not even the database's key hashes: a key's
 * digest is the SHA-256 of the document's salt and the key's SHA-256, so the
 * document and the database share no value.
 *
 * Neutral: the edge handler reads it on Workers as well as under Node.
 */
import { indexPages, type PageIndex } from "../api-reads.js";
import type { PageMembership } from "../render/blocks.js";

export const EDGE_DOCUMENT_FORMAT = 1;

/** `preview`: the key reads the preview tree, which the edge never holds: its reads go to the origin. */
export type EdgeScope = "read" | "write" | "preview";

export interface EdgeKey {
  /** {@link keyDigest} of the key: hex SHA-256 of the document's salt followed by the key's hex SHA-256. */
  digest: string;
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
  /**
   * The organization file as the origin's live tree held it when the document
   * was written (null: none): a PATCH rewrites it there, and the document
   * carries it to an edge whose tree is the last deploy's. Absent from a
   * document of an older cdsnap.
   */
  file?: string | null;
}

export interface EdgeDocument {
  format: typeof EDGE_DOCUMENT_FORMAT;
  /** The generation whose page membership it holds; null before the first build. */
  generation: string | null;
  /** When it was written (ISO 8601): how stale an edge's copy is. */
  writtenAt: string;
  /** 64 hex digits, kept from one document to the next. */
  salt: string;
  keys: EdgeKey[];
  organizations: Record<string, EdgeOrganization>;
}

/** An organization of the document as the handler looks it up. */
export interface EdgeOrganizationIndex {
  allowedOrigins: string[] | null;
  pages: PageIndex;
  /** Its organization file's bytes, when the document carries them. */
  file: Uint8Array | null;
}

/** The document indexed for the handler. */
export interface EdgeDirectory {
  readonly writtenAt: string;
  /** {@link writtenAt} in ms since the epoch, on the origin's clock. */
  readonly writtenAtMs: number;
  /** The key whose raw text is `presented`, if the document has it. */
  key(presented: string): Promise<EdgeKey | undefined>;
  organization(orgId: string): EdgeOrganizationIndex | undefined;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

const encoder = new TextEncoder();

/** Lowercase hex SHA-256 of some bytes. */
export type Sha256 = (bytes: Uint8Array) => Promise<string> | string;

/** By the web's crypto.subtle: what every platform has. */
export const subtleSha256: Sha256 = async (bytes) => {
  let out = "";
  for (const byte of new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))) out += byte.toString(16).padStart(2, "0");
  return out;
};

/** A key's digest in a document with `salt`, from the key's hex SHA-256 (what the database stores). */
export async function keyDigest(salt: string, keySha256: string, sha256: Sha256 = subtleSha256): Promise<string> {
  return sha256(encoder.encode(`${salt}${keySha256}`));
}

/** Reads a document's text; throws when it is not one this handler understands. */
export function readEdgeDocument(text: string, sha256: Sha256 = subtleSha256): EdgeDirectory {
  const doc = JSON.parse(text) as Partial<EdgeDocument>;
  if (doc === null || typeof doc !== "object" || doc.format !== EDGE_DOCUMENT_FORMAT) {
    throw new Error(`the edge document is not of format ${EDGE_DOCUMENT_FORMAT}; write it again with this version of cdsnap`);
  }
  if (!Array.isArray(doc.keys) || doc.organizations === null || typeof doc.organizations !== "object" || !SHA256_HEX.test(doc.salt ?? "")) {
    throw new Error("the edge document has no keys, no organizations or no salt");
  }
  const salt = doc.salt!;
  const keys = new Map<string, EdgeKey>();
  for (const key of doc.keys) if (SHA256_HEX.test(key.digest)) keys.set(key.digest, key);
  const organizations = new Map(
    Object.entries(doc.organizations).map(([orgId, org]) => [
      orgId,
      { allowedOrigins: org.allowedOrigins, pages: indexPages(org.pages), file: typeof org.file === "string" ? encoder.encode(org.file) : null },
    ]),
  );
  return {
    writtenAt: String(doc.writtenAt),
    writtenAtMs: Date.parse(String(doc.writtenAt)),
    key: async (presented) => keys.get(await keyDigest(salt, await sha256(encoder.encode(presented)), sha256)),
    organization: (orgId) => organizations.get(orgId),
  };
}
