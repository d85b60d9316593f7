/**
 * JSON Schema (2020-12) for every shape of the contract, generated from the zod
 * models that the build, the server and the tests already use: one source.
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
  contentSummarySchema,
  errorBodySchema,
  fieldSchema,
  organizationSchema,
  referenceListSchema,
  referenceSchema,
} from "../model/api.js";
import { businessDescriptionBody, businessOffersBody } from "../model/business.js";
import { fieldValueSchema, frontMatterSchema } from "../model/sources.js";

interface Shape {
  schema: z.ZodType;
  /** Requests and sources are described as they are sent; responses as they are served. */
  io: "input" | "output";
  description: string;
  /** Source shapes (front matter, block field rows) have a schema file but no place in the API document. */
  source?: true;
}

export const SHAPES: Record<string, Shape> = {
  Block: { schema: blockSchema, io: "output", description: "A published block." },
  BlockField: { schema: fieldSchema, io: "output", description: "A typed field of a block." },
  BlockList: { schema: blockListSchema, io: "output", description: "Published blocks in D2 order." },
  Organization: { schema: organizationSchema, io: "output", description: "Organization metadata (D4); never a secret." },
  BusinessOffer: { schema: businessOfferSchema, io: "output", description: "An offer; no link member when it has none." },
  ContentSummary: { schema: contentSummarySchema, io: "output", description: "An item of the contents list." },
  ContentList: { schema: contentListSchema, io: "output", description: "Published content, newest first." },
  ContentDetail: { schema: contentDetailSchema, io: "output", description: "A content item with its markdown body." },
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
};

/** The JSON Schema of one shape, standalone. */
export function jsonSchemaOf(name: string): Record<string, unknown> {
  const shape = SHAPES[name];
  if (!shape) throw new Error(`no shape named ${name}`);
  const generated = z.toJSONSchema(shape.schema, { target: "draft-2020-12", io: shape.io, unrepresentable: "any" });
  return { ...generated, $id: `urn:cdsnap:schemas:${name}`, title: name, description: shape.description };
}

/** The shapes as OpenAPI components, referring to each other by $ref. */
export function componentSchemas(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const io of ["output", "input"] as const) {
    const registry = z.registry<{ id: string; description: string }>();
    for (const [id, shape] of Object.entries(SHAPES)) {
      if (shape.io === io && !shape.source) registry.add(shape.schema, { id, description: shape.description });
    }
    const { schemas } = z.toJSONSchema(registry, {
      target: "draft-2020-12",
      io,
      unrepresentable: "any",
      uri: (id) => `#/components/schemas/${id}`,
    });
    for (const [id, schema] of Object.entries(schemas)) {
      const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
      out[id] = rest;
    }
  }
  return out;
}
