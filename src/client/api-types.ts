// The API's answers as plain TypeScript, for the client's users. The server
// holds every file it writes to the zod schemas of model/api.ts; these are the
// same shapes written out, so that the client's declarations need no zod (its
// package has no dependency). test/client/api-types.test.ts holds each one
// equal to the type its schema infers: a change to either fails type-checking.

/** One field of a block: its `type` says what `value` holds. */
export type Field =
  | { key: string; type: "text"; value: string }
  | { key: string; type: "image"; value: { url: string; alt: string } }
  | { key: string; type: "video"; value: { url: string; status: "ready" | "processing" | "failed" } };

/** A published block of page content. */
export interface Block {
  id: string;
  slug: string;
  name: string;
  status: "published";
  fields: Field[];
}

export interface BlockList {
  items: Block[];
}

export interface BusinessOffer {
  name: string;
  description: string;
  /** Absent when the offer links nowhere. */
  link?: string;
}

/** The organization's public metadata: never a secret. */
export interface Organization {
  id: string;
  name: string;
  slug: string;
  /** Public ids for the browser; null when not configured. */
  integrations: {
    googleAnalyticsId: string | null;
    metaPixelId: string | null;
    gtmContainerId: string | null;
  };
  businessDescription: string;
  businessOffers: BusinessOffer[];
}

/** A source a post's `[N]` marker points to (the N-th, counted from 1). */
export interface Reference {
  source: string;
  url: string;
  /** A year. */
  asOf?: string;
  /** The verbatim claim the marker refers to. */
  claim?: string;
}

/** A published post as lists show it: no body. */
export interface ContentSummary {
  id: string;
  title: string;
  slug: string;
  /** A short summary. */
  excerpt: string;
  categoryName: string | null;
  categorySlug: string | null;
  authorName: string;
  /** `YYYY-MM-DD`. */
  publishedAt: string;
  featuredImage: { url: string; alt: string } | null;
  seoMetadata: { title: string; description: string };
  tags: string[];
}

export interface ContentList {
  items: ContentSummary[];
}

/** A page of a contents list: an exact slice of it, and where the slice lies. */
export interface ContentPage {
  items: ContentSummary[];
  meta: {
    pagination: {
      /** This page's number, from 1. */
      page: number;
      /** Items a page holds (the build's page size). */
      limit: number;
      /** How many pages the list has: at least 1. */
      pages: number;
      /** How many items the whole list has. */
      total: number;
      /** The next page's number, null on the last page. */
      next: number | null;
      /** The previous page's number, null on page 1. */
      prev: number | null;
    };
  };
}

/** A published post with its markdown body and its references (null when it has none stored). */
export interface ContentDetail extends ContentSummary {
  content: string;
  references: Reference[] | null;
}

export interface Category {
  id: string;
  slug: string;
  value: string;
}

export interface CategoryList {
  items: Category[];
}

/** Every error answer's body (D6). */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    /** On `validation_failed`: which member broke which rule. */
    details?: { path: string; message: string }[];
  };
}
