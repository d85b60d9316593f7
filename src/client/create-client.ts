/**
 * A typed client for the endpoints of interface.md, for website frontends and
 * Node alike. It needs nothing but `fetch`: no zod (responses are trusted to
 * match the types, the build already parsed every file through the schemas), no
 * Node module, so the bundle stays small enough for a browser.
 */
import { pathOf, type Route } from "../api-paths.js";
import type {
  BlockList,
  Block,
  BusinessOffer,
  CategoryList,
  ContentDetail,
  ContentList,
  ContentPage,
  Organization,
  Reference,
} from "./api-types.js";
import { CdsnapApiError, errorOfResponse } from "./errors.js";

/** The part of a fetch Response the client reads. */
export interface FetchResponseLike {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** The part of RequestInit the client sends. */
export interface FetchInitLike {
  method: "GET" | "PATCH";
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  cache?: "no-cache";
}

/** Any fetch: the global one, a wrapper that adds logging or retries, a test double. */
export type FetchLike = (url: string, init: FetchInitLike) => Promise<FetchResponseLike>;

export interface ClientOptions {
  /** Where the API lives, without the `/api/…` part: `https://cdn.example.com`, or `""` for the page's own origin. */
  baseUrl: string;
  /** Sent as `x-api-key`. A browser only ever holds a read key (a write key belongs on a server). */
  apiKey: string;
  /** The organization in every path (`/api/organizations/{orgId}/…`). */
  orgId: string;
  /** Defaults to the global `fetch`, always called with `this` = globalThis. */
  fetch?: FetchLike;
}

export interface CallOptions {
  /** Aborting rejects the call with the signal's reason, not with a CdsnapApiError. */
  signal?: AbortSignal;
  /**
   * The `etag` of an earlier answer (`meta.etag`, see `withMeta`): when the
   * answer is still the same, the server sends no body (304) and the call
   * resolves with `NotModified` instead of the data.
   */
  ifNoneMatch?: string;
}

export interface BlocksOptions extends CallOptions {
  /** Only blocks attached to any of these pages (D8); empty or absent: every published block. */
  pages?: readonly string[];
}

export interface UpdateOptions extends CallOptions {
  /** The organization's ETag (see `organizationWithEtag`); a stale one fails with `precondition_failed` (412). */
  ifMatch?: string;
}

/** The answer of `PATCH …/business-description`: the stored (trimmed) text. */
export interface BusinessDescriptionResponse {
  businessDescription: string;
}

/** The answer of `PATCH …/business-offers`: the stored list. */
export interface BusinessOffersResponse {
  businessOffers: BusinessOffer[];
}

/** An offer as sent: `link` may be left out or `null` (no link). */
export type BusinessOfferInput = Omit<BusinessOffer, "link"> & { link?: string | null };

/** What an answer says about itself: what a cache or an incremental sync keeps beside the data. */
export interface AnswerMeta {
  /** 200 (or another 2xx) with the data; 304 when not modified. */
  status: number;
  /**
   * The strong ETag, to send back as `ifNoneMatch` (an answer the server
   * compressed names its coding, `"<sha256>-br"`; any coding's ETag matches
   * the same bytes). null when the answer carried none.
   */
  etag: string | null;
  /** The `Cache-Tag` values (`org:demo`, `content:demo/post-0001`): what a purge after a change names. */
  cacheTags: string[];
  /** `Last-Modified`, when the answer carried one a Date can read. */
  lastModified: Date | null;
}

/** An answer with its data. */
export interface Fresh<T> {
  notModified: false;
  data: T;
  meta: AnswerMeta;
}

/** The answer to a call with `ifNoneMatch` when nothing changed since that ETag (HTTP 304): no data. */
export interface NotModified {
  notModified: true;
  meta: AnswerMeta;
}

export type Answer<T> = Fresh<T> | NotModified;

/**
 * What a read resolves with: the data, or also `NotModified` when the call
 * may have sent an `ifNoneMatch` (its options have one that may be a string).
 * Asked by key: an options type without the member would not "extend" one
 * whose members are all optional (TypeScript's weak type check).
 */
export type ReadResult<T, O extends CallOptions> = "ifNoneMatch" extends keyof O ? (O["ifNoneMatch"] extends undefined ? T : T | NotModified) : T;

/** What a `withMeta` read resolves with: `Fresh`, or also `NotModified` when the call may have sent an `ifNoneMatch`. */
export type AnswerResult<T, O extends CallOptions> = "ifNoneMatch" extends keyof O ? (O["ifNoneMatch"] extends undefined ? Fresh<T> : Answer<T>) : Fresh<T>;

/** Whether a read's result is `NotModified` (the data held from the earlier answer is still current). */
export function isNotModified(result: unknown): result is NotModified {
  return typeof result === "object" && result !== null && (result as { notModified?: unknown }).notModified === true && "meta" in result;
}

export interface WithEtag<T> {
  data: T;
  /** The strong ETag of the answer, for `ifMatch`; null when the answer carried none. */
  etag: string | null;
}

/**
 * One method per endpoint of interface.md; each resolves with the documented
 * JSON body. A read given an `ifNoneMatch` may resolve with `NotModified`
 * instead (its type says so only then).
 */
export interface CdsnapClient {
  /** `GET …/blocks[?pages=a,b]`: published blocks, in D2 order. */
  blocks<O extends BlocksOptions = {}>(options?: O): Promise<ReadResult<BlockList, O>>;
  /** `GET …/blocks/{id}`; `not_found` (404) when unknown or unpublished. */
  block<O extends CallOptions = {}>(id: string, options?: O): Promise<ReadResult<Block, O>>;
  /** `GET …/blocks/by-slug/{slug}`. */
  blockBySlug<O extends CallOptions = {}>(slug: string, options?: O): Promise<ReadResult<Block, O>>;
  /** `GET …/organization`: metadata, public integration ids, business description and offers. */
  organization<O extends CallOptions = {}>(options?: O): Promise<ReadResult<Organization, O>>;
  /** The organization and its current ETag, bypassing the browser cache: what `ifMatch` needs. */
  organizationWithEtag(options?: Omit<CallOptions, "ifNoneMatch">): Promise<WithEtag<Organization>>;
  /** `GET …/contents`: summaries (no body), newest first. */
  contents<O extends CallOptions = {}>(options?: O): Promise<ReadResult<ContentList, O>>;
  /**
   * `GET …/contents/page/{page}`: page `page` (from 1) of the contents list, and
   * `meta.pagination`; `not_found` past the last page (page 1 always exists).
   */
  contentsPage<O extends CallOptions = {}>(page: number, options?: O): Promise<ReadResult<ContentPage, O>>;
  /** `GET …/categories/{categorySlug}/contents/page/{page}`: the same, of one category's posts. */
  categoryContentsPage<O extends CallOptions = {}>(categorySlug: string, page: number, options?: O): Promise<ReadResult<ContentPage, O>>;
  /** `GET …/contents/{id}`: the detail, markdown body included. */
  content<O extends CallOptions = {}>(id: string, options?: O): Promise<ReadResult<ContentDetail, O>>;
  /** `GET …/contents/by-slug/{slug}`. */
  contentBySlug<O extends CallOptions = {}>(slug: string, options?: O): Promise<ReadResult<ContentDetail, O>>;
  /** `GET …/contents/{id}/references`: a bare array, `[]` when the post has none. */
  references<O extends CallOptions = {}>(id: string, options?: O): Promise<ReadResult<Reference[], O>>;
  /** `GET …/categories`. */
  categories<O extends CallOptions = {}>(options?: O): Promise<ReadResult<CategoryList, O>>;
  /** `PATCH …/business-description`; needs a write key. `""` clears it. */
  updateBusinessDescription(text: string, options?: UpdateOptions): Promise<BusinessDescriptionResponse>;
  /** `PATCH …/business-offers` with the whole list; `[]` clears it. Needs a write key. */
  updateBusinessOffers(list: readonly BusinessOfferInput[], options?: UpdateOptions): Promise<BusinessOffersResponse>;
  /** The same calls, each resolving with the data and what the answer says about itself (`meta`), or `NotModified`. */
  withMeta: CdsnapClientWithMeta;
}

/**
 * Every call with its answer's `meta` (ETag, Cache-Tag, Last-Modified): for an
 * incremental sync, keep `meta.etag` beside the data and send it back as
 * `ifNoneMatch` next time.
 */
export interface CdsnapClientWithMeta {
  blocks<O extends BlocksOptions = {}>(options?: O): Promise<AnswerResult<BlockList, O>>;
  block<O extends CallOptions = {}>(id: string, options?: O): Promise<AnswerResult<Block, O>>;
  blockBySlug<O extends CallOptions = {}>(slug: string, options?: O): Promise<AnswerResult<Block, O>>;
  organization<O extends CallOptions = {}>(options?: O): Promise<AnswerResult<Organization, O>>;
  contents<O extends CallOptions = {}>(options?: O): Promise<AnswerResult<ContentList, O>>;
  contentsPage<O extends CallOptions = {}>(page: number, options?: O): Promise<AnswerResult<ContentPage, O>>;
  categoryContentsPage<O extends CallOptions = {}>(categorySlug: string, page: number, options?: O): Promise<AnswerResult<ContentPage, O>>;
  content<O extends CallOptions = {}>(id: string, options?: O): Promise<AnswerResult<ContentDetail, O>>;
  contentBySlug<O extends CallOptions = {}>(slug: string, options?: O): Promise<AnswerResult<ContentDetail, O>>;
  references<O extends CallOptions = {}>(id: string, options?: O): Promise<AnswerResult<Reference[], O>>;
  categories<O extends CallOptions = {}>(options?: O): Promise<AnswerResult<CategoryList, O>>;
  /** `meta.etag` is the organization's new ETag, for the next `ifMatch`. */
  updateBusinessDescription(text: string, options?: UpdateOptions): Promise<Fresh<BusinessDescriptionResponse>>;
  updateBusinessOffers(list: readonly BusinessOfferInput[], options?: UpdateOptions): Promise<Fresh<BusinessOffersResponse>>;
}

interface Call {
  method: "GET" | "PATCH";
  route: Route;
  query?: string;
  body?: unknown;
  ifMatch?: string | undefined;
  ifNoneMatch?: string | undefined;
  signal?: AbortSignal | undefined;
  revalidate?: boolean;
}

/**
 * `.` and `..` are the only values encodeURIComponent leaves as dot segments, which
 * every URL parser resolves away (`…/blocks/.` would fetch the block list, and
 * `…/contents/./references` the post with the id "references"). No legal id or slug
 * holds a dot (D9), so spelling the dots `%2E` only turns them into the 404 they are.
 */
function segment(value: string): string {
  return value === "." || value === ".." ? value.replaceAll(".", "%2E") : value;
}

function metaOf(response: FetchResponseLike): AnswerMeta {
  const modified = response.headers.get("last-modified");
  const time = modified === null ? NaN : Date.parse(modified);
  return {
    status: response.status,
    etag: response.headers.get("etag"),
    cacheTags: (response.headers.get("cache-tag") ?? "").split(",").map((tag) => tag.trim()).filter((tag) => tag !== ""),
    lastModified: Number.isNaN(time) ? null : new Date(time),
  };
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * @example
 *   const cms = createClient({ baseUrl: "https://cdn.example.com", apiKey: READ_KEY, orgId: "demo" });
 *   const { items } = await cms.blocks({ pages: ["home"] });
 *   const post = await cms.contentBySlug("welcome-to-the-northwind-journal");
 */
export function createClient(options: ClientOptions): CdsnapClient {
  const { apiKey } = options;
  if (typeof apiKey !== "string" || apiKey === "") throw new TypeError("createClient: apiKey must be a non-empty string");
  if (typeof options.orgId !== "string" || options.orgId === "") {
    throw new TypeError("createClient: orgId must be a non-empty string");
  }
  const orgId = segment(options.orgId);
  if (typeof options.baseUrl !== "string") throw new TypeError("createClient: baseUrl must be a string");
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  // Assigning the global fetch to FetchLike is what checks that FetchLike fits the real one.
  const candidate: FetchLike | undefined = options.fetch ?? globalThis.fetch;
  if (typeof candidate !== "function") throw new TypeError("createClient: no global fetch here; pass one as options.fetch");
  const fetchImpl: FetchLike = candidate;

  async function send<T>(call: Call): Promise<Answer<T>> {
    const path = pathOf(call.route);
    const what = `${call.method} ${path}`;
    const headers: Record<string, string> = { accept: "application/json", "x-api-key": apiKey };
    const init: FetchInitLike = { method: call.method, headers };
    if (call.body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(call.body);
    }
    if (call.ifMatch !== undefined) headers["if-match"] = call.ifMatch;
    if (call.ifNoneMatch !== undefined) headers["if-none-match"] = call.ifNoneMatch;
    if (call.signal) init.signal = call.signal;
    if (call.revalidate) init.cache = "no-cache";

    let response: FetchResponseLike;
    let text: string;
    try {
      // Called with `this` = globalThis: a browser's fetch throws "Illegal invocation" when detached.
      response = await fetchImpl.call(globalThis, baseUrl + path + (call.query ?? ""), init);
    } catch (cause) {
      if (call.signal?.aborted) throw cause;
      throw new CdsnapApiError({
        status: 0,
        code: "network_error",
        message: `${what} failed: ${describe(cause)}`,
        cause,
      });
    }
    try {
      text = await response.text();
    } catch (cause) {
      if (call.signal?.aborted) throw cause;
      throw new CdsnapApiError({
        status: response.status,
        code: "network_error",
        message: `${what}: the answer broke off: ${describe(cause)}`,
        cause,
      });
    }
    // Only a conditional call expects one: without If-None-Match a 304 is no answer to it.
    if (response.status === 304 && call.ifNoneMatch !== undefined) return { notModified: true, meta: metaOf(response) };
    if (response.status < 200 || response.status > 299) throw errorOfResponse(response.status, text, what);
    try {
      return { notModified: false, data: JSON.parse(text) as T, meta: metaOf(response) };
    } catch (cause) {
      throw new CdsnapApiError({
        status: response.status,
        code: "bad_response",
        message: `${what} answered ${response.status} without JSON`,
        cause,
      });
    }
  }

  // A read's type (AnswerResult, ReadResult) follows from its options at the call site, which no implementation sees.
  const readWithMeta = <T>(route: Route, o: CallOptions | undefined, query?: string) =>
    send<T>({ method: "GET", route, query, signal: o?.signal, ifNoneMatch: o?.ifNoneMatch }) as Promise<never>;
  const patchWithMeta = async <T>(route: Route, body: unknown, o: UpdateOptions | undefined): Promise<Fresh<T>> =>
    (await send<T>({ method: "PATCH", route, body, ifMatch: o?.ifMatch, signal: o?.signal })) as Fresh<T>;

  const withMeta: CdsnapClientWithMeta = {
    blocks(o) {
      const pages = (o?.pages ?? []).filter((p) => p !== "");
      // Commas stay literal: they separate the names (D8); everything inside a name is encoded.
      const query = pages.length > 0 ? `?pages=${pages.map(encodeURIComponent).join(",")}` : "";
      return readWithMeta({ kind: "blocks", orgId }, o, query);
    },
    block: (id, o) => readWithMeta({ kind: "block", orgId, id: segment(id) }, o),
    blockBySlug: (slug, o) => readWithMeta({ kind: "blockBySlug", orgId, slug: segment(slug) }, o),
    organization: (o) => readWithMeta({ kind: "organization", orgId }, o),
    contents: (o) => readWithMeta({ kind: "contents", orgId }, o),
    contentsPage: (page, o) => readWithMeta({ kind: "contentsPage", orgId, page: String(page) }, o),
    categoryContentsPage: (slug, page, o) => readWithMeta({ kind: "categoryContentsPage", orgId, slug: segment(slug), page: String(page) }, o),
    content: (id, o) => readWithMeta({ kind: "content", orgId, id: segment(id) }, o),
    contentBySlug: (slug, o) => readWithMeta({ kind: "contentBySlug", orgId, slug: segment(slug) }, o),
    references: (id, o) => readWithMeta({ kind: "references", orgId, id: segment(id) }, o),
    categories: (o) => readWithMeta({ kind: "categories", orgId }, o),
    updateBusinessDescription: (text, o) => patchWithMeta({ kind: "businessDescription", orgId }, { businessDescription: text }, o),
    updateBusinessOffers: (list, o) => patchWithMeta({ kind: "businessOffers", orgId }, { businessOffers: list }, o),
  };

  // The plain form of a read: the data, or the NotModified a conditional call may get.
  const plain = async <T>(answer: Promise<Answer<T>>): Promise<never> => {
    const settled = await answer;
    return (settled.notModified ? settled : settled.data) as never;
  };

  return {
    withMeta,
    blocks: (o) => plain(withMeta.blocks(o)),
    block: (id, o) => plain(withMeta.block(id, o)),
    blockBySlug: (slug, o) => plain(withMeta.blockBySlug(slug, o)),
    organization: (o) => plain(withMeta.organization(o)),
    // "no-cache": a browser revalidates instead of handing back a cached copy with an old ETag.
    organizationWithEtag: async (o) => {
      const answer = (await send<Organization>({ method: "GET", route: { kind: "organization", orgId }, signal: o?.signal, revalidate: true })) as Fresh<Organization>;
      return { data: answer.data, etag: answer.meta.etag };
    },
    contents: (o) => plain(withMeta.contents(o)),
    contentsPage: (page, o) => plain(withMeta.contentsPage(page, o)),
    categoryContentsPage: (slug, page, o) => plain(withMeta.categoryContentsPage(slug, page, o)),
    content: (id, o) => plain(withMeta.content(id, o)),
    contentBySlug: (slug, o) => plain(withMeta.contentBySlug(slug, o)),
    references: (id, o) => plain(withMeta.references(id, o)),
    categories: (o) => plain(withMeta.categories(o)),
    updateBusinessDescription: async (text, o) => (await withMeta.updateBusinessDescription(text, o)).data,
    updateBusinessOffers: async (list, o) => (await withMeta.updateBusinessOffers(list, o)).data,
  };
}
