import {
  contentDetailSchema,
  contentSummarySchema,
  previewContentDetailSchema,
  previewContentSummarySchema,
  referenceListSchema,
  type ContentDetail,
  type ContentSummary,
  type PreviewStatus,
  type Reference,
} from "../model/api.js";
import { isBlank } from "../model/rules.js";
import type { CategoryRecord, PostHead, PostRecord } from "../model/snapshot.js";
import { compareCodeUnits } from "./canonical-json.js";

export type PostState = "published" | "draft" | "archived" | "scheduled";

/** D1: published status and a publish instant not after `now`. */
export function stateOf(post: PostHead, now: number): PostState {
  if (post.meta.status !== "published") return post.meta.status;
  return post.publish.instant > now ? "scheduled" : "published";
}

/** D2: newest publish instant first, ties by slug ascending. */
export function sortNewestFirst<T extends PostHead>(posts: readonly T[]): T[] {
  return [...posts].sort(
    (a, b) => b.publish.instant - a.publish.instant || compareCodeUnits(a.meta.slug, b.meta.slug),
  );
}

function referencesOf(post: PostRecord): Reference[] | null {
  const refs = post.meta.references;
  if (refs === undefined) return null;
  return refs.map((r) => ({
    source: r.source,
    url: r.url,
    ...(r.asOf === undefined ? {} : { asOf: r.asOf }),
    ...(r.claim === undefined ? {} : { claim: r.claim }),
  }));
}

const orDefault = (value: string | undefined, fallback: string) => (isBlank(value) ? fallback : value);

/** What a post shows of its category: its name and slug. */
export type CategoryNames = ReadonlyMap<string, Pick<CategoryRecord, "slug" | "value">>;

function summaryFields(post: PostRecord, categories: CategoryNames) {
  const meta = post.meta;
  const category = meta.category === undefined ? undefined : categories.get(meta.category);
  return {
    id: meta.id,
    title: meta.title,
    slug: meta.slug,
    excerpt: post.excerpt,
    categoryName: category?.value ?? null,
    categorySlug: category?.slug ?? null,
    authorName: meta.authorName,
    publishedAt: post.publish.date,
    featuredImage: meta.featuredImage ? { url: meta.featuredImage.url, alt: meta.featuredImage.alt } : null,
    seoMetadata: {
      title: orDefault(meta.seoMetadata?.title, meta.title),
      description: orDefault(meta.seoMetadata?.description, post.excerpt),
    },
    tags: meta.tags ?? [],
  };
}

/**
 * The list item of a post: everything but the body, so it needs no body in
 * memory. With a `status`, the preview tree's item, which carries it.
 */
export function renderSummary(post: PostRecord, categories: CategoryNames, status?: PreviewStatus): ContentSummary {
  const fields = summaryFields(post, categories);
  return status === undefined ? contentSummarySchema.parse(fields) : previewContentSummarySchema.parse({ ...fields, status });
}

export function renderDetail(
  post: PostRecord,
  body: string,
  categories: ReadonlyMap<string, CategoryRecord>,
  status?: PreviewStatus,
): ContentDetail {
  const fields = { ...summaryFields(post, categories), content: body, references: referencesOf(post) };
  return status === undefined ? contentDetailSchema.parse(fields) : previewContentDetailSchema.parse({ ...fields, status });
}

/** D3: `/references` answers `[]` for a post whose references are null. */
export function renderReferences(detail: ContentDetail): Reference[] {
  return referenceListSchema.parse(detail.references ?? []);
}
