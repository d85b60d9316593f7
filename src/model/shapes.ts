/**
 * Every shape of the contract by name: the responses and request bodies the
 * route table names, and the source shapes that get a schema file. The audit
 * checks a file against its route's shape, the write proxy's bodies are these
 * schemas, and contract/ turns each into JSON Schema.
 */
import { z } from "zod";
import {
  blockListSchema,
  blockSchema,
  businessDescriptionResponseSchema,
  businessOffersResponseSchema,
  businessOfferSchema,
  categoryListSchema,
  categorySchema,
  contentDetailSchema,
  contentListSchema,
  contentPageSchema,
  contentSummarySchema,
  errorBodySchema,
  fieldSchema,
  organizationSchema,
  previewContentDetailSchema,
  previewContentListSchema,
  previewContentPageSchema,
  previewContentSummarySchema,
  referenceListSchema,
  referenceSchema,
} from "./api.js";
import { businessDescriptionBody, businessOffersBody } from "./business.js";
import { changeEventSchema } from "./change-event.js";
import { fieldValueSchema, frontMatterSchema } from "./sources.js";

export interface Shape {
  schema: z.ZodType;
  /** Requests and sources are described as they are sent; responses as they are served. */
  io: "input" | "output";
  description: string;
  /**
   * Shapes outside the HTTP API (the sources' front matter and block field
   * rows, the on-change command's stdin) have a schema file but no place in the API document.
   */
  source?: true;
}

export const SHAPES = {
  Block: { schema: blockSchema, io: "output", description: "A published block." },
  BlockField: { schema: fieldSchema, io: "output", description: "A typed field of a block." },
  BlockList: { schema: blockListSchema, io: "output", description: "Published blocks in D2 order." },
  Organization: { schema: organizationSchema, io: "output", description: "Organization metadata (D4); never a secret." },
  BusinessOffer: { schema: businessOfferSchema, io: "output", description: "An offer; no link member when it has none." },
  ContentSummary: { schema: contentSummarySchema, io: "output", description: "An item of the contents list." },
  ContentList: { schema: contentListSchema, io: "output", description: "Published content, newest first." },
  ContentPage: {
    schema: contentPageSchema,
    io: "output",
    description: "A page of a contents list: an exact slice of it, and meta.pagination saying where it lies.",
  },
  ContentDetail: { schema: contentDetailSchema, io: "output", description: "A content item with its markdown body." },
  PreviewContentSummary: {
    schema: previewContentSummarySchema,
    io: "output",
    description: "An item of the contents list of the preview tree: a post in any state but archived, with its status.",
  },
  PreviewContentList: {
    schema: previewContentListSchema,
    io: "output",
    description: "The preview tree's contents: published, scheduled and draft posts, newest first.",
  },
  PreviewContentPage: {
    schema: previewContentPageSchema,
    io: "output",
    description: "A page of a contents list of the preview tree: an exact slice of it, each post with its status.",
  },
  PreviewContentDetail: {
    schema: previewContentDetailSchema,
    io: "output",
    description: "A content item of the preview tree, with its markdown body and its status.",
  },
  Reference: { schema: referenceSchema, io: "output", description: "A source cited by a [N] marker." },
  ReferenceList: { schema: referenceListSchema, io: "output", description: "A bare array of references." },
  Category: { schema: categorySchema, io: "output", description: "A category." },
  CategoryList: { schema: categoryListSchema, io: "output", description: "Categories in D2 order." },
  BusinessDescriptionResponse: {
    schema: businessDescriptionResponseSchema,
    io: "output",
    description: "The stored business description.",
  },
  BusinessOffersResponse: { schema: businessOffersResponseSchema, io: "output", description: "The stored offers." },
  Error: { schema: errorBodySchema, io: "output", description: "Every error body (D6)." },
  BusinessDescriptionBody: {
    schema: businessDescriptionBody,
    io: "input",
    description: "PATCH business-description body (D7).",
  },
  BusinessOffersBody: { schema: businessOffersBody, io: "input", description: "PATCH business-offers body (D7)." },
  FrontMatter: { schema: frontMatterSchema, io: "input", description: "The YAML front matter of a post.", source: true },
  BlockFieldValue: {
    schema: fieldValueSchema,
    io: "input",
    description: "A block_fields row as read: key, type and the JSON value.",
    source: true,
  },
  ChangeEvent: {
    schema: changeEventSchema,
    io: "output",
    description: "What the --on-change command reads on its stdin: the API paths, cache tags and organizations a change made stale.",
    source: true,
  },
} satisfies Record<string, Shape>;

export type ShapeName = keyof typeof SHAPES;

/**
 * Which tree a build writes: the public one, or the preview one beside it
 * (`--preview`), which also holds drafts and scheduled posts, each with its status.
 */
export type Publication = "public" | "preview";

/** The shapes a preview tree's post files have instead of the route table's. */
const PREVIEW_SHAPES: Partial<Record<ShapeName, ShapeName>> = {
  ContentSummary: "PreviewContentSummary",
  ContentList: "PreviewContentList",
  ContentPage: "PreviewContentPage",
  ContentDetail: "PreviewContentDetail",
};

/** The shape a file of `publication`'s tree has, given the one the route table names. */
export function shapeIn(publication: Publication, shape: ShapeName): ShapeName {
  return publication === "preview" ? (PREVIEW_SHAPES[shape] ?? shape) : shape;
}
