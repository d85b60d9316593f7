/**
 * What the build reads, as zod schemas: the markdown front matter of
 * data-contract.md and the database rows, with the bounds of D9.
 */
import { z } from "zod";
import {
  FIELD_KEY_PATTERN,
  SCHEMA_PATTERNS,
  codePointLength,
  httpUrlSchema,
  idSchema,
  isOrigin,
  itemIdSchema,
  maxCodePoints,
  mediaUrlSchema,
  parsePublishDate,
  slugSchema,
} from "./rules.js";

const text = z.string().min(1, { message: "must not be empty" });

// A blank seoMetadata.title falls back on the title (D3), which has nothing to fall back on.
const title = z
  .string()
  .min(1, { message: "must not be empty", abort: true })
  .refine((value) => value.trim() !== "", { message: "must not be blank" })
  .meta({ pattern: SCHEMA_PATTERNS.notBlank });

export const publishDateSchema = z.string().refine((value) => parsePublishDate(value) !== null, {
  message: "must be an existing date, YYYY-MM-DD or an ISO 8601 date-time",
});

export const imageSchema = z.strictObject({ url: mediaUrlSchema, alt: z.string() });

export const sourceReferenceSchema = z.strictObject({
  source: text,
  url: httpUrlSchema,
  // D9: YAML reads `asOf: 2024` as a number; the contract wants the year as text.
  asOf: z
    .union([z.string(), z.number().int()])
    .transform(String)
    .pipe(z.string().regex(/^\d{4}$/, { message: "must be a year (YYYY)" }))
    .optional(),
  claim: z.string().optional(),
});

export const frontMatterSchema = z.strictObject({
  id: itemIdSchema,
  title,
  slug: slugSchema,
  status: z.enum(["draft", "published", "archived"]),
  publishedAt: publishDateSchema,
  authorName: text,
  // D9: an empty excerpt counts as absent.
  excerpt: z
    .string()
    .optional()
    .transform((value) => (value === "" ? undefined : value)),
  category: slugSchema.optional(),
  tags: z.array(text).optional(),
  featuredImage: imageSchema.optional(),
  seoMetadata: z.strictObject({ title: z.string().optional(), description: z.string().optional() }).optional(),
  references: z.array(sourceReferenceSchema).optional(),
});

export type FrontMatter = z.output<typeof frontMatterSchema>;

const nullableText = z
  .string()
  .nullable()
  .transform((value) => (value === null || value.trim() === "" ? null : value));

export const organizationRowSchema = z.object({
  id: idSchema,
  name: text,
  slug: slugSchema,
  google_analytics_id: nullableText,
  meta_pixel_id: nullableText,
  gtm_container_id: nullableText,
  business_description: z.string(),
  allowed_origins: z
    .string()
    .nullable()
    .transform((value, ctx) => {
      if (value === null) return null;
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        // not JSON: reported below
      }
      if (Array.isArray(parsed) && parsed.every((o) => typeof o === "string" && isOrigin(o))) return parsed as string[];
      ctx.addIssue({ code: "custom", message: 'must be NULL or a JSON array of origins like ["https://example.com"]' });
      return z.NEVER;
    }),
});

export const categoryRowSchema = z.object({
  id: itemIdSchema,
  slug: slugSchema,
  value: text,
  position: z.number().int(),
});

export const blockRowSchema = z.object({
  id: itemIdSchema,
  slug: slugSchema,
  name: text,
  status: z.enum(["draft", "published", "archived"]),
  position: z.number().int(),
});

const fieldKey = z.string().regex(FIELD_KEY_PATTERN, { message: "must be 1-64 characters of A-Z a-z 0-9 _ -" });

export const fieldValueSchema = z.discriminatedUnion("type", [
  z.strictObject({
    key: fieldKey,
    type: z.literal("text"),
    value: z.string().refine(maxCodePoints(100_000), { message: "must be at most 100000 characters" }),
  }),
  z.strictObject({ key: fieldKey, type: z.literal("image"), value: imageSchema }),
  z.strictObject({
    key: fieldKey,
    type: z.literal("video"),
    value: z.strictObject({ url: mediaUrlSchema, status: z.enum(["ready", "processing", "failed"]) }),
  }),
]);

export type FieldValue = z.output<typeof fieldValueSchema>;

export const pageNameSchema = z
  .string()
  .refine((page) => page.trim() === page && page !== "" && !page.includes(","), {
    message: "must be a non-empty page name without surrounding spaces or commas",
  })
  .refine((page) => codePointLength(page) <= 200, { message: "must be at most 200 characters" });
