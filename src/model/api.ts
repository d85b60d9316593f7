/**
 * The response shapes of interface.md with decisions D3 and D4, as strict zod
 * schemas: every rendered file is parsed through one of these, so a member the
 * contract does not name (a secret, an internal column) fails the build.
 */
import { z } from "zod";

const imageValue = z.strictObject({ url: z.string(), alt: z.string() });
const videoValue = z.strictObject({
  url: z.string(),
  status: z.enum(["ready", "processing", "failed"]),
});

export const fieldSchema = z.discriminatedUnion("type", [
  z.strictObject({ key: z.string(), type: z.literal("text"), value: z.string() }),
  z.strictObject({ key: z.string(), type: z.literal("image"), value: imageValue }),
  z.strictObject({ key: z.string(), type: z.literal("video"), value: videoValue }),
]);

export const blockSchema = z.strictObject({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  status: z.literal("published"),
  fields: z.array(fieldSchema),
});

export const blockListSchema = z.strictObject({ items: z.array(blockSchema) });

export const businessOfferSchema = z.strictObject({
  name: z.string(),
  description: z.string(),
  link: z.string().optional(),
});

export const organizationSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  integrations: z.strictObject({
    googleAnalyticsId: z.string().nullable(),
    metaPixelId: z.string().nullable(),
    gtmContainerId: z.string().nullable(),
  }),
  businessDescription: z.string(),
  businessOffers: z.array(businessOfferSchema),
});

export const referenceSchema = z.strictObject({
  source: z.string(),
  url: z.string(),
  asOf: z.string().optional(),
  claim: z.string().optional(),
});

export const referenceListSchema = z.array(referenceSchema);

const contentSummaryShape = {
  id: z.string(),
  title: z.string(),
  slug: z.string(),
  excerpt: z.string(),
  categoryName: z.string().nullable(),
  categorySlug: z.string().nullable(),
  authorName: z.string(),
  publishedAt: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  featuredImage: z.strictObject({ url: z.string(), alt: z.string() }).nullable(),
  seoMetadata: z.strictObject({ title: z.string(), description: z.string() }),
  tags: z.array(z.string()),
};

export const contentSummarySchema = z.strictObject(contentSummaryShape);
export const contentListSchema = z.strictObject({ items: z.array(contentSummarySchema) });

const pageNumber = z.number().int().min(1);

/**
 * A page of a contents list: an exact slice of it, newest first, and where the
 * slice lies (Ghost's `meta.pagination`). Page 1 always exists, empty when the
 * list is; `next` and `prev` are page numbers, null past either end.
 */
const pageMeta = z.strictObject({
  pagination: z.strictObject({
    page: pageNumber,
    limit: pageNumber,
    pages: pageNumber,
    total: z.number().int().min(0),
    next: pageNumber.nullable(),
    prev: pageNumber.nullable(),
  }),
});

export const contentPageSchema = z.strictObject({ items: z.array(contentSummarySchema), meta: pageMeta });

export const contentDetailSchema = z.strictObject({
  ...contentSummaryShape,
  content: z.string(),
  references: z.array(referenceSchema).nullable(),
});

/**
 * A post's state in the preview tree (docs/decisions.md, "Previews"): what an editor
 * previewing it needs to know, since the preview lists drafts and scheduled
 * posts beside published ones. Never in the public tree.
 */
export const previewStatusSchema = z.enum(["published", "scheduled", "draft"]);

const previewShape = { status: previewStatusSchema };

export const previewContentSummarySchema = z.strictObject({ ...contentSummaryShape, ...previewShape });
export const previewContentListSchema = z.strictObject({ items: z.array(previewContentSummarySchema) });
export const previewContentPageSchema = z.strictObject({ items: z.array(previewContentSummarySchema), meta: pageMeta });
export const previewContentDetailSchema = z.strictObject({ ...contentDetailSchema.shape, ...previewShape });

export const categorySchema = z.strictObject({ id: z.string(), slug: z.string(), value: z.string() });
export const categoryListSchema = z.strictObject({ items: z.array(categorySchema) });

export const businessDescriptionResponseSchema = z.strictObject({ businessDescription: z.string() });
export const businessOffersResponseSchema = z.strictObject({
  businessOffers: z.array(businessOfferSchema),
});

export const errorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.string().regex(/^[a-z]+(?:_[a-z]+)*$/),
    message: z.string(),
    details: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
  }),
});

export type Field = z.infer<typeof fieldSchema>;
export type Block = z.infer<typeof blockSchema>;
export type BlockList = z.infer<typeof blockListSchema>;
export type BusinessOffer = z.infer<typeof businessOfferSchema>;
export type Organization = z.infer<typeof organizationSchema>;
export type Reference = z.infer<typeof referenceSchema>;
export type ContentSummary = z.infer<typeof contentSummarySchema>;
export type ContentList = z.infer<typeof contentListSchema>;
export type ContentPage = z.infer<typeof contentPageSchema>;
export type ContentDetail = z.infer<typeof contentDetailSchema>;
export type PreviewStatus = z.infer<typeof previewStatusSchema>;
export type PreviewContentSummary = z.infer<typeof previewContentSummarySchema>;
export type PreviewContentDetail = z.infer<typeof previewContentDetailSchema>;
export type Category = z.infer<typeof categorySchema>;
export type CategoryList = z.infer<typeof categoryListSchema>;
export type ErrorBody = z.infer<typeof errorBodySchema>;
