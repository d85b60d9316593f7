/**
 * GET and HEAD of every file route (D10). The route has already been mapped to
 * its one file by api-paths, and the bytes come from the file cache, so the
 * bytes sent are always the ones the ETag was computed from. Every GET or HEAD
 * is answered here in one write. Range is ignored (RFC 9110 §14.2 allows it):
 * a slice of a JSON document is of no use to a client, a 206 or 416 would
 * follow a CDN's cache rules of its own, and one whole answer per path keeps
 * the cache and the ETag simple.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { CACHE_CONTROL } from "../api-http.js";
import { filterBlocks, matchesIfNoneMatch, requestedPages, takesPages } from "../api-reads.js";
import { fileOf, type Route } from "../api-paths.js";
import type { BlockList } from "../model/api.js";
import type { PageMembership } from "../render/blocks.js";
import { canonicalJson } from "../render/canonical-json.js";
import { liveGenerationSync, pagesFileOf, type Generation, type TreeStore } from "../emit/tree-store.js";
import { etagOf, type CachedFile, type FileCache } from "./file-cache.js";
import { httpError } from "../api-errors.js";
import { cacheTagsOf } from "../route-table.js";
import { JSON_TYPE, type Exchange } from "./respond.js";

export interface StaticRoute {
  /** `query` is the raw query string, without the `?`. */
  serve(ex: Exchange, route: Route, query: string): Promise<void> | void;
}

/** The headers of a file's 200 after the CORS ones. */
interface FileHeaders {
  /** Also the headers of a 304. */
  validators: string[];
  all: string[];
}

export function createStaticRoute(store: TreeStore, cache: FileCache): StaticRoute {
  const membership = new Map<string, PageMembership>();
  let membershipGen = "";
  const parsedLists = new Map<string, BlockList>();

  async function pagesOf(gen: Generation, orgId: string): Promise<PageMembership> {
    if (gen.id !== membershipGen) {
      membership.clear();
      parsedLists.clear();
      membershipGen = gen.id;
    }
    let pages = membership.get(orgId);
    if (!pages) {
      pages = JSON.parse(await readFile(pagesFileOf(gen, orgId), "utf8").catch(() => "{}")) as PageMembership;
      membership.set(orgId, pages);
    }
    return pages;
  }

  // Tags depend only on the route and the bytes: parse each distinct file once.
  const tagsByEtag = new Map<string, string>();
  function tagsOf(route: Route, file: CachedFile): string {
    const key = `${route.kind}\u0000${route.orgId}\u0000${file.etag}`;
    let tags = tagsByEtag.get(key);
    if (tags === undefined) {
      if (tagsByEtag.size > 50_000) tagsByEtag.clear();
      tags = cacheTagsOf(route, JSON.parse(file.bytes.toString("utf8")));
      tagsByEtag.set(key, tags);
    }
    return tags;
  }

  // One file always answers one route, so a cached file's headers are built once.
  const headersByFile = new WeakMap<CachedFile, FileHeaders>();
  function headersOf(route: Route, file: CachedFile): FileHeaders {
    let headers = headersByFile.get(file);
    if (!headers) {
      const validators = ["ETag", file.etag, "Cache-Control", CACHE_CONTROL, "Cache-Tag", tagsOf(route, file)];
      headers = {
        validators,
        all: [
          ...validators,
          "Content-Length",
          String(file.bytes.length),
          // Tells clients and CDNs not to ask for a slice: they would get the whole document.
          "Accept-Ranges",
          "none",
          "Last-Modified",
          file.mtime.toUTCString(),
          "Content-Type",
          JSON_TYPE,
        ],
      };
      headersByFile.set(file, headers);
    }
    return headers;
  }

  async function filtered(gen: Generation, orgId: string, file: CachedFile, pages: Set<string>): Promise<CachedFile> {
    const membershipOfOrg = await pagesOf(gen, orgId);
    let list = parsedLists.get(file.etag);
    if (!list) {
      list = JSON.parse(file.bytes.toString("utf8")) as BlockList;
      parsedLists.set(file.etag, list);
    }
    const bytes = Buffer.from(canonicalJson(filterBlocks(list, membershipOfOrg, pages)), "utf8");
    return { bytes, etag: etagOf(bytes), mtime: file.mtime };
  }

  function answer(ex: Exchange, route: Route, file: CachedFile): void {
    const { req, res } = ex;
    const headers = headersOf(route, file);
    if (matchesIfNoneMatch(req.headers["if-none-match"], file.etag)) {
      res.writeHead(304, withBase(ex.baseHeaders, headers.validators));
      res.end();
      return;
    }
    res.writeHead(200, withBase(ex.baseHeaders, headers.all));
    if (req.method === "HEAD") res.end();
    else res.end(file.bytes);
  }

  // Through the --out link, so that one lstat notices a replaced file and a new generation alike.
  const keyOf = (rel: string) => `${store.out}/${rel}`;

  async function loadAndAnswer(ex: Exchange, route: Route, rel: string, query: string): Promise<void> {
    const gen = liveGenerationSync(store);
    if (!gen) throw httpError.notFound();
    let file = await cache.get(path.join(gen.tree, rel), { root: gen.tree, key: keyOf(rel) });
    if (!file) throw httpError.notFound();
    const pages = takesPages(route) && query !== "" ? requestedPages(new URLSearchParams(query)) : null;
    if (pages) file = await filtered(gen, route.orgId, file, pages);
    answer(ex, route, file);
  }

  return {
    serve(ex, route, query) {
      const rel = fileOf(route);
      // A cached file is answered without a turn of the event loop; a miss and ?pages= await.
      const cached = takesPages(route) && query !== "" ? null : cache.peek(keyOf(rel));
      return cached ? answer(ex, route, cached) : loadAndAnswer(ex, route, rel, query);
    },
  };
}


function withBase(base: Readonly<Record<string, string>>, headers: string[]): string[] {
  const all: string[] = [];
  for (const name in base) all.push(name, base[name]!);
  for (const value of headers) all.push(value);
  return all;
}
