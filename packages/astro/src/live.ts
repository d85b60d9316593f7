/**
 * Live loaders for Astro 5's experimental live content collections
 * (`experimental.liveContentCollections`, `src/live.config.ts`): read on each
 * request of an on-demand page, with no build in between. Each entry carries
 * the answer's `Cache-Tag` values and `Last-Modified` as its cache hint, so a
 * page can tag its own response with what a purge after a change names.
 */
import {
  CdsnapApiError,
  createClient,
  type AnswerMeta,
  type ContentDetail,
  type ContentSummary,
  type Fresh,
  type Organization,
} from "@cdsnap/client";
import type { CdsnapLoaderOptions } from "./loaders.js";
import { CONCURRENCY, mapLimited } from "./pool.js";

/** Astro's cache hint: the tags and the time a response built from the data may carry. */
export interface CacheHint {
  tags?: string[];
  lastModified?: Date;
}

export interface LiveEntry<TData> {
  id: string;
  data: TData;
  cacheHint?: CacheHint;
}

export interface LiveCollection<TData> {
  entries: LiveEntry<TData>[];
  cacheHint?: CacheHint;
}

/**
 * A live loader, as `defineLiveCollection({ loader })` takes it: Astro's
 * `LiveLoader` written out, so that the package's types name nothing of Astro's
 * but its zod. A failed call is returned as its `CdsnapApiError`; an unknown
 * id or slug is `undefined`, which Astro reports as not found.
 */
export interface CdsnapLiveLoader<TData extends Record<string, any>, TEntryFilter extends Record<string, any>, TCollectionFilter extends Record<string, any>> {
  name: string;
  loadEntry: (context: { filter: TEntryFilter }) => Promise<LiveEntry<TData> | undefined | { error: CdsnapApiError }>;
  loadCollection: (context: { filter?: TCollectionFilter }) => Promise<LiveCollection<TData> | { error: CdsnapApiError }>;
}

/** The client's interface as a type literal: Astro requires entry data to fit `Record<string, unknown>`, which no interface does. */
export type Plain<T> = { [K in keyof T]: T[K] };

/** One post, by id (`getLiveEntry("posts", id)` passes `{ id }`) or by slug. */
export type PostLookup = { id: string } | { slug: string };

/** Which posts a collection holds: those of a category, or with a tag. */
export interface PostFilter {
  categorySlug?: string;
  tag?: string;
}

function hintOf(metas: readonly AnswerMeta[]): CacheHint {
  const tags = [...new Set(metas.flatMap((meta) => meta.cacheTags))];
  const times = metas.flatMap((meta) => (meta.lastModified ? [meta.lastModified.getTime()] : []));
  return times.length > 0 ? { tags, lastModified: new Date(Math.max(...times)) } : { tags };
}

/** A CdsnapApiError as Astro's `{ error }`; anything else is a bug and thrown. */
async function settled<T>(read: () => Promise<T>): Promise<T | { error: CdsnapApiError }> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof CdsnapApiError) return { error };
    throw error;
  }
}

async function orUndefinedWhenNotFound<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof CdsnapApiError && error.code === "not_found") return undefined;
    throw error;
  }
}

function matches(post: ContentSummary, filter: PostFilter | undefined): boolean {
  return (filter?.categorySlug === undefined || post.categorySlug === filter.categorySlug) && (filter?.tag === undefined || post.tags.includes(filter.tag));
}

/** A read without `ifNoneMatch` never resolves NotModified. */
const fresh = async <T>(answer: Promise<Fresh<T> | { notModified: true }>): Promise<Fresh<T>> => (await answer) as Fresh<T>;

/**
 * Posts with their body (`ContentDetail`), read on each request: an entry is
 * one request (`GET …/contents/{id}` or `…/by-slug/{slug}`); a collection is
 * the list and then each post's detail, so a listing that needs no body is
 * better served by {@link cdsnapLivePostSummaries}.
 */
export function cdsnapLivePosts(options: CdsnapLoaderOptions): CdsnapLiveLoader<Plain<ContentDetail>, PostLookup, PostFilter> {
  return {
    name: "cdsnap-live-posts",
    loadEntry: ({ filter }) =>
      settled(() =>
        orUndefinedWhenNotFound(async () => {
          const cms = createClient(options);
          const answer = await fresh("slug" in filter ? cms.withMeta.contentBySlug(filter.slug) : cms.withMeta.content(filter.id));
          return { id: answer.data.id, data: answer.data, cacheHint: hintOf([answer.meta]) };
        }),
      ),
    loadCollection: ({ filter }) =>
      settled(async () => {
        const cms = createClient(options);
        const list = await fresh(cms.withMeta.contents());
        const wanted = list.data.items.filter((post) => matches(post, filter));
        const entries = await mapLimited(wanted, CONCURRENCY, async (post) => {
          const answer = await fresh(cms.withMeta.content(post.id));
          return { id: answer.data.id, data: answer.data, cacheHint: hintOf([answer.meta]) };
        });
        return { entries, cacheHint: hintOf([list.meta]) };
      }),
  };
}

/** Post summaries (no body), read on each request: a collection or an entry is one request, `GET …/contents`. */
export function cdsnapLivePostSummaries(options: CdsnapLoaderOptions): CdsnapLiveLoader<Plain<ContentSummary>, PostLookup, PostFilter> {
  return {
    name: "cdsnap-live-post-summaries",
    loadEntry: ({ filter }) =>
      settled(async () => {
        const list = await fresh(createClient(options).withMeta.contents());
        const post = list.data.items.find((item) => ("slug" in filter ? item.slug === filter.slug : item.id === filter.id));
        return post && { id: post.id, data: post, cacheHint: hintOf([list.meta]) };
      }),
    loadCollection: ({ filter }) =>
      settled(async () => {
        const list = await fresh(createClient(options).withMeta.contents());
        const entries = list.data.items.filter((post) => matches(post, filter)).map((post) => ({ id: post.id, data: post }));
        return { entries, cacheHint: hintOf([list.meta]) };
      }),
  };
}

/** The organization, read on each request: one entry under its id (`orgId`), one request. */
export function cdsnapLiveOrganization(options: CdsnapLoaderOptions): CdsnapLiveLoader<Plain<Organization>, { id: string }, Record<string, never>> {
  const read = async (): Promise<LiveEntry<Organization>> => {
    const answer = await fresh(createClient(options).withMeta.organization());
    return { id: options.orgId, data: answer.data, cacheHint: hintOf([answer.meta]) };
  };
  return {
    name: "cdsnap-live-organization",
    loadEntry: ({ filter }) => settled(async () => (filter.id === options.orgId ? read() : undefined)),
    loadCollection: () => settled(async () => ({ entries: [await read()] })),
  };
}
