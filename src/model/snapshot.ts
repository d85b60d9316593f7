/**
 * Validated source data: what the readers hand to the pure renderer. Nothing in
 * here may come from `organization_secrets`; the types have no place for it.
 */
import type { StoredOffer } from "./business.js";
import type { FieldValue, FrontMatter } from "./sources.js";
import type { PublishDate } from "./rules.js";

export interface Integrations {
  googleAnalyticsId: string | null;
  metaPixelId: string | null;
  gtmContainerId: string | null;
}

export interface OrgRecord {
  id: string;
  name: string;
  slug: string;
  integrations: Integrations;
  businessDescription: string;
  businessOffers: StoredOffer[];
  allowedOrigins: string[] | null;
}

export interface CategoryRecord {
  id: string;
  slug: string;
  value: string;
  position: number;
}

export interface BlockRecord {
  id: string;
  slug: string;
  name: string;
  status: "draft" | "published" | "archived";
  position: number;
  /** Already in `position` order. */
  fields: FieldValue[];
  pages: string[];
}

export interface OrgSnapshot extends OrgRecord {
  categories: CategoryRecord[];
  blocks: BlockRecord[];
}

/** A post as parsed from its file: what the front matter says and the body. */
export interface ParsedPost {
  /** Path relative to the content folder, for messages. */
  file: string;
  meta: FrontMatter;
  body: string;
  publish: PublishDate;
  /** File line of each top-level front matter key, so cross-file problems can say file:line. */
  lines?: Record<string, number>;
}

/** A validated post as the build holds it. */
export interface PostRecord extends Omit<ParsedPost, "body"> {
  /** From the front matter, or derived from the body (D3). */
  excerpt: string;
  /** Identity of the source file when it was read (size, mtime, inode): an unchanged file is not read again. */
  fingerprint: string;
  /** SHA-256 of the source file's bytes: the post's identity, so a file copied anew (a fresh checkout) is not parsed again. */
  sha256: string;
  /** The markdown body, unless the build let it go to bound memory; then it is read again when needed. */
  body?: string;
}
