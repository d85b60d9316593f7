/**
 * The API's answers as zod schemas built with Astro's own zod (`astro/zod`),
 * so that a collection's entries are typed and checked by the zod the site's
 * Astro runs. Each infers exactly the client's type of the same name
 * (test/astro/schemas.test.ts holds them equal). `z.object`, not strict: a
 * member a later server adds (D13: changes are additive) is dropped, not a
 * failed build.
 */
import { z } from "astro/zod";

const image = z.object({ url: z.string(), alt: z.string() });

export const fieldSchema = z.discriminatedUnion("type", [
  z.object({ key: z.string(), type: z.literal("text"), value: z.string() }),
  z.object({ key: z.string(), type: z.literal("image"), value: image }),
  z.object({ key: z.string(), type: z.literal("video"), value: z.object({ url: z.string(), status: z.enum(["ready", "processing", "failed"]) }) }),
]);

export const blockSchema = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  status: z.literal("published"),
  fields: z.array(fieldSchema),
});

export const businessOfferSchema = z.object({ name: z.string(), description: z.string(), link: z.string().optional() });

export const organizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  integrations: z.object({ googleAnalyticsId: z.string().nullable(), metaPixelId: z.string().nullable(), gtmContainerId: z.string().nullable() }),
  businessDescription: z.string(),
  businessOffers: z.array(businessOfferSchema),
});

export const referenceSchema = z.object({ source: z.string(), url: z.string(), asOf: z.string().optional(), claim: z.string().optional() });

export const contentSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  slug: z.string(),
  excerpt: z.string(),
  categoryName: z.string().nullable(),
  categorySlug: z.string().nullable(),
  authorName: z.string(),
  publishedAt: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  featuredImage: image.nullable(),
  seoMetadata: z.object({ title: z.string(), description: z.string() }),
  tags: z.array(z.string()),
});

export const contentDetailSchema = contentSummarySchema.extend({ content: z.string(), references: z.array(referenceSchema).nullable() });

export const categorySchema = z.object({ id: z.string(), slug: z.string(), value: z.string() });
