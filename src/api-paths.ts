/**
 * API paths and the file each one lives in, derived from the route table
 * (route-table.ts). The builder asks where to write, the server which route a
 * request names and which file answers it, the write proxy which file to
 * regenerate, and the audit which files may exist.
 *
 * A file is its API path plus `.json`: `/api/organizations/demo/contents/p1`
 * lives at `api/organizations/demo/contents/p1.json`. Ids and slugs cannot hold a
 * `.`, so no file name can equal a folder name, and with `by-slug` reserved as an
 * id (D9) every path has exactly one file and every file exactly one path.
 */
import { kindOf, kindsWith, PARAMS, ROUTE_KINDS, ROUTES, type ParamName, type ParamSpec, type Route, type RouteKind } from "./route-table.js";

export type { Route, RouteKind } from "./route-table.js";

interface CompiledRoute {
  kind: RouteKind;
  length: number;
  /** Compared first: a path of the wrong section fails here, before any pattern runs. */
  literals: [index: number, text: string][];
  params: [index: number, param: ParamSpec][];
}

function compile(kind: RouteKind): CompiledRoute {
  const segments = ROUTES[kind].path.slice(1).split("/");
  const route: CompiledRoute = { kind, length: segments.length, literals: [], params: [] };
  segments.forEach((s, i) => {
    if (s.startsWith("{")) route.params.push([i, PARAMS[s.slice(1, -1) as ParamName]]);
    else route.literals.push([i, s]);
  });
  return route;
}

// Routes by their number of segments: a path is only ever compared with the few of its own length.
// Built on first use, so a bundle that never parses a path (the browser client) drops it.
let byLength: Map<number, CompiledRoute[]> | undefined;
function routesOfLength(length: number): readonly CompiledRoute[] {
  if (!byLength) {
    byLength = new Map();
    for (const route of ROUTE_KINDS.map(compile)) {
      const same = byLength.get(route.length) ?? [];
      same.push(route);
      byLength.set(route.length, same);
    }
  }
  return byLength.get(length) ?? [];
}

/** Whether a raw (still percent-encoded) path segment is a legal value of the parameter. */
export function paramAccepts(param: ParamSpec, value: string): boolean {
  return (
    param.pattern.test(value) && (param.maxLength === undefined || value.length <= param.maxLength) && value !== param.reserved
  );
}

// Each template split once into its literal text and the fields between:
// a build asks for the paths of every post, several times each.
let templates: Map<RouteKind, { literals: string[]; fields: string[] }> | undefined;
function templateOf(kind: RouteKind) {
  templates ??= new Map();
  let template = templates.get(kind);
  if (!template) {
    const parts = ROUTES[kind].path.split(/\{(\w+)\}/);
    template = {
      literals: parts.filter((_, i) => i % 2 === 0),
      fields: parts.filter((_, i) => i % 2 === 1).map((name) => PARAMS[name as ParamName].field),
    };
    templates.set(kind, template);
  }
  return template;
}

/** The API path of a route, e.g. `/api/organizations/demo/blocks/by-slug/hero`. */
export function pathOf(route: Route): string {
  const values = route as unknown as Record<string, string>;
  const { literals, fields } = templateOf(route.kind);
  let path = literals[0]!;
  for (let i = 0; i < fields.length; i++) path += encodeURIComponent(values[fields[i]!]!) + literals[i + 1]!;
  return path;
}

function match(route: CompiledRoute, parts: readonly string[]): Route | null {
  for (const [i, text] of route.literals) if (parts[i] !== text) return null;
  const values: Record<string, string> = { kind: route.kind };
  for (const [i, param] of route.params) {
    if (!paramAccepts(param, parts[i]!)) return null;
    values[param.field] = parts[i]!;
  }
  return values as unknown as Route;
}

/**
 * The route of an API path, or null when the path is not one the interface
 * describes. Takes the raw, still percent-encoded path: legal ids and slugs never
 * need encoding, so any `%`, `.`, `\` or empty segment simply matches nothing,
 * which is what keeps traversal tricks (`%2e%2e`, `%2f`, `..`) out. The reserved
 * id keeps the templates apart, so at most one route matches.
 */
export function parseApiPath(rawPath: string): Route | null {
  if (rawPath.charCodeAt(0) !== 0x2f) return null;
  const parts = rawPath.slice(1).split("/");
  for (const route of routesOfLength(parts.length)) {
    const found = match(route, parts);
    if (found) return found;
  }
  return null;
}

/** The file (relative to the tree root, `/`-separated) that holds a GET route's JSON. */
export function fileOf(route: Route): string {
  if (ROUTES[route.kind].access === "write") throw new Error(`${route.kind} is a write route and has no file`);
  return `${pathOf(route).slice(1)}.json`;
}

/** The inverse of {@link fileOf}: the route a tree file answers, or null for a stray file. */
export function routeOfFile(file: string): Route | null {
  if (!file.endsWith(".json")) return null;
  const route = parseApiPath(`/${file.slice(0, -".json".length)}`);
  return route && ROUTES[route.kind].access === "read" ? route : null;
}

const ORGS_FOLDER = "api/organizations/";

/** The folder of the tree that holds every file of an organization (fileOf puts each one there). */
export const orgFolderOf = (orgId: string): string => `${ORGS_FOLDER}${orgId}/`;

/** The organization whose folder holds a tree file, read off its path. */
export function orgInFolder(rel: string): string {
  return rel.slice(ORGS_FOLDER.length, rel.indexOf("/", ORGS_FOLDER.length));
}

/**
 * The two parts of an organization's tree that a build plans apart: `posts`
 * (the contents list, its pages and every post's files, made from the markdown
 * posts and the category names) and `rows` (every other file, made from the
 * database rows alone). An edited post leaves the rows' files as they are; a
 * changed block leaves the posts' files.
 */
export type OrgPart = "rows" | "posts";

/**
 * The post routes lie in two sections of an organization's folder: the list's
 * (`…/{orgId}/contents`, and all under `…/contents/`) and, for the pages of a
 * category, under another section's folder (`…/{orgId}/categories/`), whose
 * own file (`categories.json`) is a row's.
 */
let postsSections: { list: string; folders: string[] } | undefined;

function sectionsOfPosts() {
  if (!postsSections) {
    const sectionOf = (kind: RouteKind) => ROUTES[kind].path.split("/")[4]!;
    const list = sectionOf(kindOf("post", "list"));
    const folders = [...new Set(kindsWith("post", "page").map(sectionOf))].filter((s) => s !== list).sort();
    postsSections = { list, folders };
  }
  return postsSections;
}

/**
 * The key ranges [from, to) of the paths of an organization's files, or of one
 * part of them, in code unit order: "/" + 1 is "0", and "." + 1 is "/", so
 * `contents.` up to `contents0` holds exactly the list file and what lies
 * under it, and `categories/` up to `categories0` what lies under that folder.
 */
export function partRanges(orgId: string, part?: OrgPart): [string, string][] {
  const folder = orgFolderOf(orgId);
  const end = `${folder.slice(0, -1)}0`;
  if (part === undefined) return [[folder, end]];
  const { list, folders } = sectionsOfPosts();
  const posts: [string, string][] = folders.map((section) => [`${folder}${section}/`, `${folder}${section}0`]);
  posts.push([`${folder}${list}.`, `${folder}${list}0`]);
  posts.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  if (part === "posts") return posts;
  const rows: [string, string][] = [];
  let from = folder;
  for (const [start, stop] of posts) {
    rows.push([from, start]);
    from = stop;
  }
  rows.push([from, end]);
  return rows;
}

/** The part of its organization's tree a file belongs to. */
export function partOfFile(rel: string): OrgPart {
  const { list, folders } = sectionsOfPosts();
  const start = rel.indexOf("/", ORGS_FOLDER.length) + 1;
  const after = (section: string) => (rel.startsWith(section, start) ? rel.charCodeAt(start + section.length) : -1);
  const next = after(list);
  if (next === 0x2f /* / */ || next === 0x2e /* . */) return "posts";
  return folders.some((section) => after(section) === 0x2f) ? "posts" : "rows";
}

/** The key ranges of an organization's page files (role `page`): a rebuild reads their entries apart from the posts'. */
export function pageRanges(orgId: string): [string, string][] {
  const folder = orgFolderOf(orgId);
  return kindsWith("post", "page").map((kind) => {
    const prefix = `${folder}${ROUTES[kind].path.split("/").slice(4).join("/").split("{")[0]}`;
    return [prefix, `${prefix.slice(0, -1)}0`] as [string, string];
  });
}
