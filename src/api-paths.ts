/**
 * The one place that knows the API paths and the file each one lives in. The
 * builder asks it where to write, the server which file answers a request, the
 * write proxy which file to regenerate, and the audit which files may exist.
 *
 * A file is its API path plus `.json`: `/api/organizations/demo/contents/p1`
 * lives at `api/organizations/demo/contents/p1.json`. Ids and slugs cannot hold a
 * `.`, so no file name can equal a folder name, and with `by-slug` reserved as an
 * id (D9) every path has exactly one file and every file exactly one path.
 */
import { ID_PATTERN, RESERVED_ID, SLUG_PATTERN } from "./model/id-patterns.js";

export type Route =
  | { kind: "blocks"; orgId: string }
  | { kind: "block"; orgId: string; id: string }
  | { kind: "blockBySlug"; orgId: string; slug: string }
  | { kind: "organization"; orgId: string }
  | { kind: "businessDescription"; orgId: string }
  | { kind: "businessOffers"; orgId: string }
  | { kind: "contents"; orgId: string }
  | { kind: "content"; orgId: string; id: string }
  | { kind: "contentBySlug"; orgId: string; slug: string }
  | { kind: "references"; orgId: string; id: string }
  | { kind: "categories"; orgId: string };

export type RouteKind = Route["kind"];

/** Routes answered with PATCH by the write proxy; every other route is a static GET. */
export const WRITE_ROUTES: ReadonlySet<RouteKind> = new Set(["businessDescription", "businessOffers"]);

const ROOT = "/api/organizations/";
const enc = encodeURIComponent;

/** The API path of a route, e.g. `/api/organizations/demo/blocks/by-slug/hero`. */
export function pathOf(route: Route): string {
  const org = ROOT + enc(route.orgId);
  switch (route.kind) {
    case "blocks":
      return `${org}/blocks`;
    case "block":
      return `${org}/blocks/${enc(route.id)}`;
    case "blockBySlug":
      return `${org}/blocks/by-slug/${enc(route.slug)}`;
    case "organization":
      return `${org}/organization`;
    case "businessDescription":
      return `${org}/business-description`;
    case "businessOffers":
      return `${org}/business-offers`;
    case "contents":
      return `${org}/contents`;
    case "content":
      return `${org}/contents/${enc(route.id)}`;
    case "contentBySlug":
      return `${org}/contents/by-slug/${enc(route.slug)}`;
    case "references":
      return `${org}/contents/${enc(route.id)}/references`;
    case "categories":
      return `${org}/categories`;
  }
}

const isId = (s: string) => ID_PATTERN.test(s) && s !== RESERVED_ID;
const isOrgId = (s: string) => ID_PATTERN.test(s);
const isSlug = (s: string) => s.length <= 200 && SLUG_PATTERN.test(s);

/**
 * The route of an API path, or null when the path is not one the interface
 * describes. Takes the raw, still percent-encoded path: legal ids and slugs never
 * need encoding, so any `%`, `.`, `\` or empty segment simply matches nothing,
 * which is what keeps traversal tricks (`%2e%2e`, `%2f`, `..`) out.
 */
export function parseApiPath(rawPath: string): Route | null {
  if (!rawPath.startsWith(ROOT)) return null;
  const parts = rawPath.slice(ROOT.length).split("/");
  const [orgId, section, a, b, ...rest] = parts;
  if (orgId === undefined || !isOrgId(orgId) || rest.length > 0) return null;
  if (section === "blocks") {
    if (a === undefined) return { kind: "blocks", orgId };
    if (a === "by-slug") return b !== undefined && isSlug(b) ? { kind: "blockBySlug", orgId, slug: b } : null;
    return b === undefined && isId(a) ? { kind: "block", orgId, id: a } : null;
  }
  if (section === "contents") {
    if (a === undefined) return { kind: "contents", orgId };
    if (a === "by-slug") return b !== undefined && isSlug(b) ? { kind: "contentBySlug", orgId, slug: b } : null;
    if (!isId(a)) return null;
    if (b === undefined) return { kind: "content", orgId, id: a };
    return b === "references" ? { kind: "references", orgId, id: a } : null;
  }
  if (a !== undefined) return null;
  switch (section) {
    case "organization":
      return { kind: "organization", orgId };
    case "categories":
      return { kind: "categories", orgId };
    case "business-description":
      return { kind: "businessDescription", orgId };
    case "business-offers":
      return { kind: "businessOffers", orgId };
    default:
      return null;
  }
}

/** The file (relative to the tree root, `/`-separated) that holds a GET route's JSON. */
export function fileOf(route: Route): string {
  if (WRITE_ROUTES.has(route.kind)) throw new Error(`${route.kind} is a write route and has no file`);
  return `${pathOf(route).slice(1)}.json`;
}

/** The inverse of {@link fileOf}: the route a tree file answers, or null for a stray file. */
export function routeOfFile(file: string): Route | null {
  if (!file.endsWith(".json")) return null;
  const route = parseApiPath(`/${file.slice(0, -".json".length)}`);
  return route && !WRITE_ROUTES.has(route.kind) ? route : null;
}

/** The folder of one organization inside the tree, for `--org` rebuilds. */
export function orgFolderOf(orgId: string): string {
  return `api/organizations/${orgId}`;
}
