/**
 * The one table of the API's routes and errors. Everything else derives from
 * it: the path mapping and the server's routing (api-paths.ts), the methods and
 * the statuses each operation answers, the audit's shape per file, the files
 * emitted per post, the cache tags, the OpenAPI document and the client's error
 * codes. Change a template, a pattern or a status here and all of them follow.
 *
 * It imports nothing that pulls in zod or Node: the browser client bundles it.
 * Response and body shapes are named here and resolved to their zod models in
 * model/shapes.ts.
 */
import { ID_PATTERN, RESERVED_ID, SLUG_PATTERN } from "./model/id-patterns.js";
import type { ShapeName } from "./model/shapes.js";

export interface ParamSpec {
  /** The member of a {@link Route} that holds the value. */
  field: "orgId" | "id" | "slug" | "page";
  pattern: RegExp;
  maxLength?: number;
  /** A value the pattern allows that never names an item (D9). */
  reserved?: string;
}

/** The path parameters, by the name the templates use. */
export const PARAMS = {
  orgId: {
    field: "orgId",
    pattern: ID_PATTERN,
  },
  blockId: {
    field: "id",
    pattern: ID_PATTERN,
    reserved: RESERVED_ID,
  },
  contentId: {
    field: "id",
    pattern: ID_PATTERN,
    reserved: RESERVED_ID,
  },
  slug: {
    field: "slug",
    pattern: SLUG_PATTERN,
    maxLength: 200,
  },
  categorySlug: {
    field: "slug",
    pattern: SLUG_PATTERN,
    maxLength: 200,
  },
  /** A page number as written, from 1: no sign, no leading zero, so each page has one path. */
  page: {
    field: "page",
    pattern: /^[1-9][0-9]{0,6}$/,
  },
} as const satisfies Record<string, ParamSpec>;

export type ParamName = keyof typeof PARAMS;

/**
 * Every error code the server answers, with its status. `httpError` builds
 * them, the OpenAPI document lists them per operation, and the client's
 * `ApiErrorCode` is this list plus the two codes the client makes itself.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  malformed_json: 400,
  request_aborted: 400,
  unauthorized: 401,
  forbidden: 403,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  validation_failed: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
} as const;

export type ServerErrorCode = keyof typeof ERROR_STATUS;

/**
 * The codes of an operation: the refusals any request can meet before its
 * route is looked at (the request itself is at fault, or the server), and these.
 */
function anyRequestAnd(...codes: ServerErrorCode[]): readonly ServerErrorCode[] {
  return ["bad_request", "request_timeout", "expectation_failed", "headers_too_large", "internal", ...codes];
}

// The /* @__PURE__ */ marks let the browser client's bundle drop what it never reads.
/**
 * The methods a route answers, and for each the error codes it can answer.
 * Any other method on a route's path is `405 method_not_allowed` with `Allow`.
 * `not_found` is on every operation: a path whose parameters break their
 * patterns (`/api/organizations/%C2%84/blocks`) names no route at all.
 */
export const OPERATIONS = {
  read: {
    GET: /* @__PURE__ */ anyRequestAnd("unauthorized", "forbidden", "not_found", "rate_limited"),
    HEAD: /* @__PURE__ */ anyRequestAnd("unauthorized", "forbidden", "not_found", "rate_limited"),
    OPTIONS: /* @__PURE__ */ anyRequestAnd("not_found"),
  },
  write: {
    PATCH: /* @__PURE__ */ anyRequestAnd(
      "malformed_json",
      "request_aborted",
      "unauthorized",
      "forbidden",
      "insufficient_scope",
      "not_found",
      "precondition_failed",
      "payload_too_large",
      "unsupported_media_type",
      "validation_failed",
      "rate_limited",
    ),
    OPTIONS: /* @__PURE__ */ anyRequestAnd("not_found"),
  },
} satisfies Record<string, Record<string, readonly ServerErrorCode[]>>;

export type Access = keyof typeof OPERATIONS;
export type Method = keyof (typeof OPERATIONS)["read"] | keyof (typeof OPERATIONS)["write"];

/** What a route's answer is about: its cache tags and which files a build emits per what follow from it. */
export type Entity = "organization" | "block" | "post" | "category";
/**
 * - `single`, `list`: one file per organization;
 * - `byId`, `bySlug`, `references`: one file per published item;
 * - `page`: one file per page of a list (page 1 always), per organization or per category;
 * - `write`: no file, the write proxy answers.
 */
export type Role = "single" | "list" | "byId" | "bySlug" | "references" | "page" | "write";

export interface RouteSpec {
  path: string;
  access: Access;
  entity: Entity;
  role: Role;
  /** The response shape of a 200. */
  shape: ShapeName;
  /** The request body's shape (PATCH). */
  body?: ShapeName;
  /** Query parameters it reads; any other is ignored. */
  query?: readonly "pages"[];
}

export const ROUTES = {
  blocks: {
    path: "/api/organizations/{orgId}/blocks",
    access: "read",
    entity: "block",
    role: "list",
    shape: "BlockList",
    query: ["pages"],
  },
  block: {
    path: "/api/organizations/{orgId}/blocks/{blockId}",
    access: "read",
    entity: "block",
    role: "byId",
    shape: "Block",
  },
  blockBySlug: {
    path: "/api/organizations/{orgId}/blocks/by-slug/{slug}",
    access: "read",
    entity: "block",
    role: "bySlug",
    shape: "Block",
  },
  organization: {
    path: "/api/organizations/{orgId}/organization",
    access: "read",
    entity: "organization",
    role: "single",
    shape: "Organization",
  },
  businessDescription: {
    path: "/api/organizations/{orgId}/business-description",
    access: "write",
    entity: "organization",
    role: "write",
    shape: "BusinessDescriptionResponse",
    body: "BusinessDescriptionBody",
  },
  businessOffers: {
    path: "/api/organizations/{orgId}/business-offers",
    access: "write",
    entity: "organization",
    role: "write",
    shape: "BusinessOffersResponse",
    body: "BusinessOffersBody",
  },
  contents: {
    path: "/api/organizations/{orgId}/contents",
    access: "read",
    entity: "post",
    role: "list",
    shape: "ContentList",
  },
  contentsPage: {
    path: "/api/organizations/{orgId}/contents/page/{page}",
    access: "read",
    entity: "post",
    role: "page",
    shape: "ContentPage",
  },
  content: {
    path: "/api/organizations/{orgId}/contents/{contentId}",
    access: "read",
    entity: "post",
    role: "byId",
    shape: "ContentDetail",
  },
  contentBySlug: {
    path: "/api/organizations/{orgId}/contents/by-slug/{slug}",
    access: "read",
    entity: "post",
    role: "bySlug",
    shape: "ContentDetail",
  },
  references: {
    path: "/api/organizations/{orgId}/contents/{contentId}/references",
    access: "read",
    entity: "post",
    role: "references",
    shape: "ReferenceList",
  },
  categories: {
    path: "/api/organizations/{orgId}/categories",
    access: "read",
    entity: "category",
    role: "list",
    shape: "CategoryList",
  },
  categoryContentsPage: {
    path: "/api/organizations/{orgId}/categories/{categorySlug}/contents/page/{page}",
    access: "read",
    entity: "post",
    role: "page",
    shape: "ContentPage",
  },
} as const satisfies Record<string, RouteSpec>;

export type RouteKind = keyof typeof ROUTES;
export const ROUTE_KINDS = /* @__PURE__ */ Object.keys(ROUTES) as RouteKind[];

type ParamsIn<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | ParamsIn<Rest> : never;
type FieldsOf<K extends RouteKind> = (typeof PARAMS)[ParamsIn<(typeof ROUTES)[K]["path"]> & ParamName]["field"];
type Simplify<T> = { [K in keyof T]: T[K] };

/** A concrete route: its kind and the values of its parameters, e.g. `{ kind: "block", orgId: "demo", id: "blk-hero" }`. */
export type Route = { [K in RouteKind]: Simplify<{ kind: K } & { [F in FieldsOf<K>]: string }> }[RouteKind];

/** The routes the write proxy answers (PATCH); every other route is a file of the tree. */
export type WriteKind = { [K in RouteKind]: (typeof ROUTES)[K]["access"] extends "write" ? K : never }[RouteKind];
export type WriteRoute = Extract<Route, { kind: WriteKind }>;

export function isWriteRoute(route: Route): route is WriteRoute {
  return ROUTES[route.kind].access === "write";
}

/** The methods a route's path answers, as `Allow` lists them. */
export function methodsOf(kind: RouteKind): Method[] {
  return Object.keys(OPERATIONS[ROUTES[kind].access]) as Method[];
}

/** The route kinds with this role for this entity (`post` `byId` → `content`). */
export function kindsWith(entity: Entity, ...roles: Role[]): RouteKind[] {
  return ROUTE_KINDS.filter((k) => ROUTES[k].entity === entity && (roles as string[]).includes(ROUTES[k].role));
}

/** The one route of an entity with a role, for rules that pair them (an item's id file with its slug file). */
export function kindOf(entity: Entity, role: Role): RouteKind {
  const [kind, ...more] = kindsWith(entity, role);
  if (!kind || more.length > 0) throw new Error(`the route table has ${more.length + (kind ? 1 : 0)} ${entity} ${role} routes`);
  return kind;
}

/** Routes with one file per organization: every organization has each of them. */
export const ORG_FILE_KINDS = /* @__PURE__ */ ROUTE_KINDS.filter((k) => ROUTES[k].role === "single" || ROUTES[k].role === "list");

/** The routes of an item (block or post) that a build writes one file each for. */
export function itemFileKinds(entity: "block" | "post"): RouteKind[] {
  return kindsWith(entity, "byId", "bySlug", "references");
}

/** The route of an item by a kind from {@link itemFileKinds}. */
export function itemRoute(kind: RouteKind, orgId: string, item: { id: string; slug: string }): Route {
  return { kind, orgId, id: item.id, slug: item.slug } as Route;
}

const CACHE_TAG_PREFIX: Record<Entity, string> = { organization: "organization", block: "block", post: "content", category: "category" };

/**
 * The one tag of a file route's answer that names just what it shows: its
 * collection (`contents:demo`), its item (`content:demo/post-0011`), which
 * the item's answers by id, by slug and its references share, or its page
 * (`contentsPage:demo/2`, `categoryContentsPage:demo/news/1`): an edit moves
 * one page, an added post every page after it, and each is purged alone. Purging it drops
 * that answer and little else; purging every changed answer's tag drops every
 * changed answer (the on-change hook's `tags`). `json` is read only on a
 * by-slug route, where the path does not name the item. Null for a PATCH route.
 */
export function entityTagOf(route: Route, json: unknown): string | null {
  const { entity, role } = ROUTES[route.kind];
  const org = route.orgId;
  if (role === "single" || role === "list") return `${route.kind}:${org}`;
  if ("page" in route) return `${route.kind}:${org}/${"slug" in route ? `${route.slug}/` : ""}${route.page}`;
  if (role === "bySlug") return `${CACHE_TAG_PREFIX[entity]}:${org}/${(json as { id?: string }).id}`;
  if ("id" in route) return `${CACHE_TAG_PREFIX[entity]}:${org}/${route.id}`;
  return null;
}

/** The tag every answer of an organization carries: an access change purges by it. */
export const orgTagOf = (orgId: string): string => `org:${orgId}`;

/**
 * `Cache-Tag` values (Cloudflare and Fastly purge by them): the entities a file
 * holds, so a CDN can purge every cached answer that shows one post, block or
 * category without knowing the paths. Lists carry their collection's tag only;
 * purge the collection with any of its items.
 */
export function cacheTagsOf(route: Route, json: unknown): string {
  const { entity, role } = ROUTES[route.kind];
  const org = route.orgId;
  const tags = [orgTagOf(org)];
  const own = entityTagOf(route, json);
  if (own !== null) tags.push(own);
  const item = json as { categorySlug?: string | null };
  if (entity === "post" && (role === "byId" || role === "bySlug") && item.categorySlug) {
    tags.push(`${CACHE_TAG_PREFIX.category}:${org}/${item.categorySlug}`);
  }
  return tags.join(",");
}
