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
  Organization,
  Reference,
} from "../model/api.js";
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

export interface WithEtag<T> {
  data: T;
  /** The strong ETag of the answer, for `ifMatch`; null when the answer carried none. */
  etag: string | null;
}

/** One method per endpoint of interface.md; each resolves with the documented JSON body. */
export interface CdsnapClient {
  /** `GET …/blocks[?pages=a,b]`: published blocks, in D2 order. */
  blocks(options?: BlocksOptions): Promise<BlockList>;
  /** `GET …/blocks/{id}`; `not_found` (404) when unknown or unpublished. */
  block(id: string, options?: CallOptions): Promise<Block>;
  /** `GET …/blocks/by-slug/{slug}`. */
  blockBySlug(slug: string, options?: CallOptions): Promise<Block>;
  /** `GET …/organization`: metadata, public integration ids, business description and offers. */
  organization(options?: CallOptions): Promise<Organization>;
  /** The organization and its current ETag, bypassing the browser cache: what `ifMatch` needs. */
  organizationWithEtag(options?: CallOptions): Promise<WithEtag<Organization>>;
  /** `GET …/contents`: summaries (no body), newest first. */
  contents(options?: CallOptions): Promise<ContentList>;
  /** `GET …/contents/{id}`: the detail, markdown body included. */
  content(id: string, options?: CallOptions): Promise<ContentDetail>;
  /** `GET …/contents/by-slug/{slug}`. */
  contentBySlug(slug: string, options?: CallOptions): Promise<ContentDetail>;
  /** `GET …/contents/{id}/references`: a bare array, `[]` when the post has none. */
  references(id: string, options?: CallOptions): Promise<Reference[]>;
  /** `GET …/categories`. */
  categories(options?: CallOptions): Promise<CategoryList>;
  /** `PATCH …/business-description`; needs a write key. `""` clears it. */
  updateBusinessDescription(text: string, options?: UpdateOptions): Promise<BusinessDescriptionResponse>;
  /** `PATCH …/business-offers` with the whole list; `[]` clears it. Needs a write key. */
  updateBusinessOffers(list: readonly BusinessOfferInput[], options?: UpdateOptions): Promise<BusinessOffersResponse>;
}

interface Call {
  method: "GET" | "PATCH";
  route: Route;
  query?: string;
  body?: unknown;
  ifMatch?: string | undefined;
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

  async function send<T>(call: Call): Promise<WithEtag<T>> {
    const path = pathOf(call.route);
    const what = `${call.method} ${path}`;
    const headers: Record<string, string> = { accept: "application/json", "x-api-key": apiKey };
    const init: FetchInitLike = { method: call.method, headers };
    if (call.body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(call.body);
    }
    if (call.ifMatch !== undefined) headers["if-match"] = call.ifMatch;
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
    if (response.status < 200 || response.status > 299) throw errorOfResponse(response.status, text, what);
    try {
      return { data: JSON.parse(text) as T, etag: response.headers.get("etag") };
    } catch (cause) {
      throw new CdsnapApiError({
        status: response.status,
        code: "bad_response",
        message: `${what} answered ${response.status} without JSON`,
        cause,
      });
    }
  }

  const get = async <T>(route: Route, o: CallOptions | undefined, query?: string): Promise<T> =>
    (await send<T>({ method: "GET", route, query, signal: o?.signal })).data;
  const patch = async <T>(route: Route, body: unknown, o: UpdateOptions | undefined): Promise<T> =>
    (await send<T>({ method: "PATCH", route, body, ifMatch: o?.ifMatch, signal: o?.signal })).data;

  return {
    blocks(o) {
      const pages = (o?.pages ?? []).filter((p) => p !== "");
      // Commas stay literal: they separate the names (D8); everything inside a name is encoded.
      const query = pages.length > 0 ? `?pages=${pages.map(encodeURIComponent).join(",")}` : "";
      return get({ kind: "blocks", orgId }, o, query);
    },
    block: (id, o) => get({ kind: "block", orgId, id: segment(id) }, o),
    blockBySlug: (slug, o) => get({ kind: "blockBySlug", orgId, slug: segment(slug) }, o),
    organization: (o) => get({ kind: "organization", orgId }, o),
    // "no-cache": a browser revalidates instead of handing back a cached copy with an old ETag.
    organizationWithEtag: (o) =>
      send({ method: "GET", route: { kind: "organization", orgId }, signal: o?.signal, revalidate: true }),
    contents: (o) => get({ kind: "contents", orgId }, o),
    content: (id, o) => get({ kind: "content", orgId, id: segment(id) }, o),
    contentBySlug: (slug, o) => get({ kind: "contentBySlug", orgId, slug: segment(slug) }, o),
    references: (id, o) => get({ kind: "references", orgId, id: segment(id) }, o),
    categories: (o) => get({ kind: "categories", orgId }, o),
    updateBusinessDescription: (text, o) =>
      patch({ kind: "businessDescription", orgId }, { businessDescription: text }, o),
    updateBusinessOffers: (list, o) => patch({ kind: "businessOffers", orgId }, { businessOffers: list }, o),
  };
}
