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

export interface PostRecord {
  /** Path relative to the content folder, for messages. */
  file: string;
  meta: FrontMatter;
  body: string;
  publish: PublishDate;
}
