/**
 * Build-time loaders for Astro's content layer. Each keeps the server's ETag
 * of what it stored (an entry's digest, or the list's in the collection's meta
 * store) and sends it back as `ifNoneMatch`: a build after one post changed
 * costs the list's body and that post's, every other answer is a 304.
 */
import { CdsnapApiError, createClient, type Answer, type CdsnapClient, type ClientOptions, type ContentDetail } from "@cdsnap/client";
import { CONCURRENCY, mapLimited } from "./pool.js";
import { blockSchema, categorySchema, contentDetailSchema, organizationSchema } from "./schemas.js";

/** What Astro's markdown renderer gives, kept with an entry so that `render(entry)` shows it. */
export interface RenderedContent {
  html: string;
  metadata?: Record<string, unknown>;
}

/**
 * The part of Astro's `LoaderContext` these loaders use. Declared here rather
 * than imported, so that the package's types name nothing of Astro's but its
 * zod: the context of any Astro 5 fits it.
 */
export interface CdsnapLoaderContext {
  collection: string;
  store: {
    get(key: string): { digest?: string | number } | undefined;
    set(entry: { id: string; data: Record<string, unknown>; digest?: string | number; rendered?: RenderedContent }): boolean;
    delete(key: string): void;
    keys(): string[];
  };
  meta: {
    get(key: string): string | undefined;
    set(key: string, value: string): void;
    delete(key: string): void;
  };
  logger: { info(message: string): void; warn(message: string): void };
  parseData<TData extends Record<string, unknown>>(props: { id: string; data: TData }): Promise<TData>;
  renderMarkdown(content: string): Promise<RenderedContent>;
  generateDigest(data: Record<string, unknown> | string): string;
}

/** A content-layer loader, as `defineCollection({ loader })` takes it. */
export interface CdsnapLoader<Schema> {
  name: string;
  load(context: CdsnapLoaderContext): Promise<void>;
  schema: Schema;
}

/** Where the API is: the client's options (`baseUrl`, `apiKey` (a read key), `orgId`, optionally `fetch`). */
export type CdsnapLoaderOptions = ClientOptions;

export interface CdsnapBlocksOptions extends CdsnapLoaderOptions {
  /** Only the blocks on any of these pages; absent or empty: every published block. */
  pages?: readonly string[];
}

/** The list's ETag and the ids it held, in the collection's meta store: a 304 for the list still names its posts. */
const LIST_KEY = "cdsnap-list";

interface KeptList {
  etag: string;
  ids: string[];
}

function keptList(context: CdsnapLoaderContext): KeptList | undefined {
  const kept = context.meta.get(LIST_KEY);
  if (kept === undefined) return undefined;
  try {
    const parsed = JSON.parse(kept) as Partial<KeptList>;
    return typeof parsed.etag === "string" && Array.isArray(parsed.ids) ? { etag: parsed.etag, ids: parsed.ids } : undefined;
  } catch {
    return undefined;
  }
}

function keepList(context: CdsnapLoaderContext, etag: string | null, ids: string[]): void {
  if (etag === null) context.meta.delete(LIST_KEY);
  else context.meta.set(LIST_KEY, JSON.stringify({ etag, ids } satisfies KeptList));
}

/** Removes the stored entries whose id the server no longer lists; how many. */
function removeUnlisted(context: CdsnapLoaderContext, ids: readonly string[]): number {
  const listed = new Set(ids);
  const gone = context.store.keys().filter((id) => !listed.has(id));
  for (const id of gone) context.store.delete(id);
  return gone.length;
}

const isNotFound = (error: unknown) => error instanceof CdsnapApiError && error.code === "not_found";

/** A string digest of an entry kept from an earlier build: the ETag to send back. */
function keptEtag(context: CdsnapLoaderContext, id: string): string | undefined {
  const digest = context.store.get(id)?.digest;
  return typeof digest === "string" ? digest : undefined;
}

/**
 * The published posts, each entry the post's detail (`ContentDetail`, body and
 * references included) under its id, its markdown body rendered for
 * `render(entry)`. A post is fetched only when its ETag changed since the last
 * build; a post the list no longer holds is removed.
 */
export function cdsnapPosts(options: CdsnapLoaderOptions): CdsnapLoader<typeof contentDetailSchema> {
  return {
    name: "cdsnap-posts",
    schema: contentDetailSchema,
    async load(context) {
      const cms = createClient(options);
      const kept = keptList(context);
      const list = await cms.withMeta.contents({ ifNoneMatch: kept?.etag });
      const ids = list.notModified ? kept!.ids : list.data.items.map((item) => item.id);
      if (!list.notModified) keepList(context, list.meta.etag, ids);
      let removed = removeUnlisted(context, ids);
      const answers = await mapLimited(ids, CONCURRENCY, async (id): Promise<Answer<ContentDetail> | undefined> => {
        try {
          return await cms.withMeta.content(id, { ifNoneMatch: keptEtag(context, id) });
        } catch (error) {
          // Unpublished between the list and its detail: the next build's list will not hold it either.
          if (isNotFound(error)) return undefined;
          throw error;
        }
      });
      let fetched = 0;
      // Stored in the list's order, not as the answers came: a new collection is in the API's order.
      for (const [at, answer] of answers.entries()) {
        const id = ids[at]!;
        if (answer === undefined) {
          context.store.delete(id);
          removed++;
        } else if (!answer.notModified) {
          const data = await context.parseData({ id, data: { ...answer.data } });
          context.store.set({ id, data, digest: answer.meta.etag ?? undefined, rendered: await context.renderMarkdown(answer.data.content) });
          fetched++;
        }
      }
      context.logger.info(`${ids.length} posts: ${fetched} fetched, ${removed} removed, the rest unchanged`);
    },
  };
}

/**
 * A collection read from one list answer: kept whole while the list's ETag
 * holds, otherwise every item stored again (an unchanged one keeps its digest,
 * so Astro rewrites nothing for it) and the unlisted ones removed.
 */
function listLoader<Schema, Item extends { id: string }>(
  name: string,
  schema: Schema,
  read: (cms: CdsnapClient, ifNoneMatch: string | undefined) => Promise<Answer<{ items: Item[] }>>,
  options: CdsnapLoaderOptions,
): CdsnapLoader<Schema> {
  return {
    name,
    schema,
    async load(context) {
      const kept = keptList(context);
      const list = await read(createClient(options), kept?.etag);
      if (list.notModified) {
        context.logger.info(`${kept!.ids.length} unchanged`);
        return;
      }
      const ids = list.data.items.map((item) => item.id);
      for (const item of list.data.items) {
        const data = await context.parseData({ id: item.id, data: { ...item } });
        context.store.set({ id: item.id, data, digest: context.generateDigest(data) });
      }
      const removed = removeUnlisted(context, ids);
      keepList(context, list.meta.etag, ids);
      context.logger.info(`${ids.length} fetched, ${removed} removed`);
    },
  };
}

/** The published blocks (all, or those on `pages`), each under its id. */
export function cdsnapBlocks(options: CdsnapBlocksOptions): CdsnapLoader<typeof blockSchema> {
  const { pages, ...client } = options;
  return listLoader("cdsnap-blocks", blockSchema, (cms, ifNoneMatch) => cms.withMeta.blocks({ pages, ifNoneMatch }), client);
}

/** The organization's categories, each under its id. */
export function cdsnapCategories(options: CdsnapLoaderOptions): CdsnapLoader<typeof categorySchema> {
  return listLoader("cdsnap-categories", categorySchema, (cms, ifNoneMatch) => cms.withMeta.categories({ ifNoneMatch }), options);
}

/** The organization's metadata, one entry under its id (`orgId`). */
export function cdsnapOrganization(options: CdsnapLoaderOptions): CdsnapLoader<typeof organizationSchema> {
  return {
    name: "cdsnap-organization",
    schema: organizationSchema,
    async load(context) {
      const id = options.orgId;
      const answer = await createClient(options).withMeta.organization({ ifNoneMatch: keptEtag(context, id) });
      if (answer.notModified) {
        context.logger.info("unchanged");
        return;
      }
      removeUnlisted(context, [id]);
      const data = await context.parseData({ id, data: { ...answer.data } });
      context.store.set({ id, data, digest: answer.meta.etag ?? undefined });
      context.logger.info("fetched");
    },
  };
}
