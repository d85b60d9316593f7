/**
 * How a read of the API is answered, in terms every platform shares: `cdsnap
 * serve` (node:http) and the edge handler (`cdsnap/edge`, fetch API) both take
 * these, so the two give the same answers. Like the route table, it imports
 * nothing that needs Node: the edge bundle runs on Workers.
 */
import { fileEtagOf } from "./content-coding.js";
import { ALLOWED_HEADERS, ALLOWED_METHODS, EXPOSED_HEADERS, PREFLIGHT_CACHE_CONTROL, PREFLIGHT_MAX_AGE, VARY } from "./api-http.js";
import { pathOf } from "./api-paths.js";
import type { BlockList, ErrorBody } from "./model/api.js";
import type { PageMembership } from "./render/blocks.js";
import { httpError } from "./api-errors.js";
import { CdsnapError } from "./errors.js";
import { canonicalJson } from "./render/canonical-json.js";
import { ROUTE_KINDS, ROUTES, cacheTagsOf, isWriteRoute, methodsOf, orgTagOf, type Route, type RouteKind, type WriteRoute } from "./route-table.js";

/** What `Allow` says on each route's path, from the route table. */
export const ALLOW = Object.fromEntries(ROUTE_KINDS.map((kind) => [kind, methodsOf(kind).join(", ")])) as Record<RouteKind, string>;

// ------------------------------------------------------------------ the decision

/** What a request with a known caller asks for: a file to answer, or a write to make. */
export type ReadDecision = { kind: "file"; route: Route } | { kind: "write"; route: WriteRoute };

/**
 * The headers of the 204 that answers an OPTIONS request, before any key is
 * asked for (D11); a path outside the API is a 404.
 */
export function preflightAnswer(route: Route | null, origin: string | null | undefined, allowed: readonly string[] | null): Record<string, string> {
  if (!route) throw httpError.notFound();
  return {
    ...preflightHeaders(origin, allowed),
    Vary: VARY,
    Allow: ALLOW[route.kind],
    // A cache may keep it per path and Origin; the organization's tag purges it when its allowed origins change.
    "Cache-Control": PREFLIGHT_CACHE_CONTROL,
    "Cache-Tag": orgTagOf(route.orgId),
  };
}

/**
 * The order in which a request is refused once its caller is known (D5, D6;
 * docs/api.md "Which error wins"): 404 for a path outside the API, 403 for
 * another organization's, 405 for a method the path does not take. What is
 * left is a file to answer (GET, HEAD) or a write (PATCH). Both front-ends
 * decide here; each checks the request itself and the key before, and
 * carries out the decision after.
 */
export function decideRead(method: string | undefined, route: Route | null, caller: { orgId: string }): ReadDecision {
  if (!route) throw httpError.notFound();
  if (route.orgId !== caller.orgId) throw httpError.forbidden();
  if (isWriteRoute(route)) {
    if (method !== "PATCH") throw httpError.methodNotAllowed(ALLOW[route.kind]);
    return { kind: "write", route };
  }
  if (method !== "GET" && method !== "HEAD") throw httpError.methodNotAllowed(ALLOW[route.kind]);
  return { kind: "file", route };
}

/**
 * The one error boundary: a client error is answered as it is; anything else
 * (a bug, a failed read) is reported with its stack and answered as a plain
 * 500 that carries neither.
 */
export function knownError(error: unknown, report: (error: unknown) => void): CdsnapError {
  if (error instanceof CdsnapError && error.status < 500) return error;
  report(error);
  return httpError.internal();
}

/** The D6 body of an error answer. */
export function errorBody(known: CdsnapError): ErrorBody {
  return { error: { code: known.code, message: known.message, ...(known.details ? { details: known.details } : {}) } };
}

/** {@link errorBody}, serialized. */
export const errorBodyOf = (known: CdsnapError): string => canonicalJson(errorBody(known));

/** A request target (origin form) as the raw, still percent-encoded path and the query without its `?`. */
export function splitTarget(target: string): { rawPath: string; query: string } {
  const q = target.indexOf("?");
  let rawPath = q === -1 ? target : target.slice(0, q);
  // D10: one trailing slash is tolerated and answers like the path without it.
  if (rawPath.length > 1 && rawPath.endsWith("/")) rawPath = rawPath.slice(0, -1);
  return { rawPath, query: q === -1 ? "" : target.slice(q + 1) };
}

/**
 * RFC 9110: If-None-Match uses the weak comparison and may list several tags or
 * `*`. `etag` is the file's own: the ETag of any of its codings matches it too.
 */
export function matchesIfNoneMatch(header: string | null | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((tag) => fileEtagOf(tag.trim().replace(/^W\//, "")) === etag);
}

/**
 * The `Cache-Tag` of a file's answers, made once per path and bytes. A tag
 * names the item the path asks for (a post's references name the post), so
 * files of different paths holding the same bytes (two posts' empty
 * references) must never share one: the memo is keyed by the path, and by
 * the bytes' SHA-256 because a by-slug answer names the id its bytes hold.
 */
export function cacheTagMemo(limit = 50_000): (route: Route, sha256: string, text: () => string) => string {
  const memo = new Map<string, string>();
  return (route, sha256, text) => {
    const key = `${pathOf(route)}\u0000${sha256}`;
    let tags = memo.get(key);
    if (tags === undefined) {
      // Bounded by forgetting all: a miss costs one parse of a file already in hand.
      if (memo.size >= limit) memo.clear();
      tags = cacheTagsOf(route, JSON.parse(text()));
      memo.set(key, tags);
    }
    return tags;
  };
}

// ------------------------------------------------------------------ CORS (D11)

const ANY_ORIGIN = Object.freeze({ "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED_HEADERS });
const NO_CORS = Object.freeze({});

/**
 * D11: the callers are browsers on the organization's website. Any origin by
 * default (`allowed` null); an organization with `allowed_origins` gets its
 * matching origin echoed and every other origin no CORS headers at all.
 * Shared, frozen objects except for an echoed origin: the common answers allocate nothing.
 */
export function corsHeaders(origin: string | null | undefined, allowed: readonly string[] | null): Readonly<Record<string, string>> {
  if (allowed === null) return ANY_ORIGIN;
  if (typeof origin === "string" && allowed.includes(origin)) {
    return { "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED_HEADERS };
  }
  return NO_CORS;
}

export function preflightHeaders(origin: string | null | undefined, allowed: readonly string[] | null): Readonly<Record<string, string>> {
  const base = corsHeaders(origin, allowed);
  if (!("Access-Control-Allow-Origin" in base)) return base;
  return {
    ...base,
    "Access-Control-Allow-Methods": ALLOWED_METHODS,
    "Access-Control-Allow-Headers": ALLOWED_HEADERS,
    "Access-Control-Max-Age": PREFLIGHT_MAX_AGE,
  };
}

/**
 * An organization's `allowed_origins` column: null allows any origin (D11); a
 * list that cannot be read allows no origin rather than every origin.
 */
export function parseAllowedOrigins(value: string | null): string[] | null {
  if (value === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return [];
  }
  return Array.isArray(parsed) ? parsed.filter((o): o is string => typeof o === "string") : [];
}

// ------------------------------------------------------------- ?pages= (D8)

/** D8: the routes that take `?pages=` (the block list). */
export const takesPages = (route: Route): boolean => "query" in ROUTES[route.kind];

/** The requested page names of `?pages=`, or null when the filter is off. */
export function requestedPages(search: URLSearchParams): Set<string> | null {
  const names = search
    .getAll("pages")
    .flatMap((value) => value.split(","))
    .map((name) => name.trim())
    .filter((name) => name !== "");
  return names.length > 0 ? new Set(names) : null;
}

/**
 * D8 membership as the readers look it up: page name → block ids. A Map, so a
 * page name is only ever a key: `?pages=constructor` or `__proto__` finds no
 * member of an object's prototype, only the pages the build wrote.
 */
export type PageIndex = ReadonlyMap<string, readonly string[]>;

/** The membership the build wrote (JSON: page name → block ids), indexed once per load. */
export function indexPages(membership: PageMembership): PageIndex {
  return new Map(Object.entries(membership));
}

/**
 * The published blocks on any of `pages`, each once, in the list's D2 order:
 * answered from the membership the build wrote beside the tree and the list
 * file itself, never from the database.
 */
export function filterBlocks(list: BlockList, index: PageIndex, pages: ReadonlySet<string>): BlockList {
  const wanted = new Set<string>();
  for (const page of pages) for (const id of index.get(page) ?? []) wanted.add(id);
  return { items: list.items.filter((block) => wanted.has(block.id)) };
}
