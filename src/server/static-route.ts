/**
 * GET and HEAD of every file route (D10), through serve-handler. The route has
 * already been mapped to its one file by api-paths; serve-handler is handed
 * exactly that file through its injectable file-system methods, so it never
 * resolves a path of its own, lists a folder or follows a link, and the bytes
 * it sends are the ones the ETag was computed from.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import serveHandler from "serve-handler";
import { fileOf, type Route } from "../api-paths.js";
import type { BlockList } from "../model/api.js";
import type { PageMembership } from "../render/blocks.js";
import { canonicalJson } from "../render/canonical-json.js";
import { liveGenerationSync, pagesFileOf, type Generation, type TreeStore } from "../emit/tree-store.js";
import { etagOf, type CachedFile, type FileCache } from "./file-cache.js";
import { httpError } from "./http-errors.js";
import { cacheTagsOf } from "./cache-tags.js";
import { filterBlocks, requestedPages } from "./pages-filter.js";
import type { Exchange } from "./respond.js";

export const CACHE_CONTROL = "public, max-age=60, stale-while-revalidate=600";

const HANDLER_CONFIG = {
  directoryListing: false,
  symlinks: false,
  cleanUrls: false,
  etag: false,
};

/** RFC 9110: If-None-Match uses the weak comparison and may list several tags or `*`. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

export interface StaticRoute {
  serve(ex: Exchange, route: Route, search: URLSearchParams): Promise<void>;
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

  return {
    async serve(ex, route, search) {
      const gen = liveGenerationSync(store);
      if (!gen) throw httpError.notFound();
      const rel = fileOf(route);
      let file = await cache.get(path.join(gen.tree, rel), gen.tree);
      if (!file) throw httpError.notFound();
      const pages = route.kind === "blocks" ? requestedPages(search) : null;
      if (pages) file = await filtered(gen, route.orgId, file, pages);

      const headers = {
        ...ex.baseHeaders,
        ETag: file.etag,
        "Cache-Control": CACHE_CONTROL,
        "Cache-Tag": tagsOf(route, file),
      };
      if (matchesIfNoneMatch(ex.req.headers["if-none-match"], file.etag)) {
        ex.res.writeHead(304, headers);
        ex.res.end();
        return;
      }
      for (const [name, value] of Object.entries(headers)) ex.res.setHeader(name, value);
      await handOver(ex.req, ex.res, rel, file);
    },
  };
}

function handOver(req: IncomingMessage, res: ServerResponse, rel: string, file: CachedFile): Promise<void> {
  const stats = {
    size: file.bytes.length,
    mtime: file.mtime,
    isDirectory: () => false,
    isSymbolicLink: () => false,
    isFile: () => true,
  };
  const request = { url: `/${rel}`, headers: { range: req.headers.range } } as unknown as IncomingMessage;
  const methods = {
    lstat: async () => stats,
    realpath: async () => "",
    readdir: async () => [],
    createReadStream: () => Readable.from([file.bytes]),
  };
  // @types/serve-handler declares node's callback signatures; serve-handler itself awaits these.
  return serveHandler(request, res, HANDLER_CONFIG, methods as unknown as Parameters<typeof serveHandler>[3]);
}
