/**
 * GET and HEAD of every file route (D10). The route has already been mapped to
 * its one file by api-paths, and the bytes come from the file cache, so the
 * bytes sent are always the ones the ETag was computed from. A file of 1 KiB or
 * more goes out in br or gzip when Accept-Encoding allows (content-coding.ts),
 * each coding with an ETag of its own and made once per file version
 * (compression.ts). Every GET or HEAD is answered here in one write. Range is
 * ignored (RFC 9110 §14.2 allows it): a slice of a JSON document is of no use
 * to a client, a 206 or 416 would follow a CDN's cache rules of its own, and
 * one whole answer per path keeps the cache and the ETag simple.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { CACHE_CONTROL, FILE_VARY, JSON_TYPE } from "../api-http.js";
import { cacheTagMemo, filterBlocks, indexPages, matchesIfNoneMatch, requestedPages, takesPages, type PageIndex } from "../api-reads.js";
import { fileOf, type Route } from "../api-paths.js";
import type { BlockList } from "../model/api.js";
import type { PageMembership } from "../render/blocks.js";
import { canonicalJson } from "../render/canonical-json.js";
import { liveGenerationSync, pagesFileOf, type Generation, type TreeStore } from "../emit/tree-store.js";
import { codedEtag, codingOf, MIN_COMPRESSED_BYTES, type Coding } from "../content-coding.js";
import type { CompressionCache, Representation } from "./compression.js";
import { etagOf, type CachedFile, type FileCache } from "./file-cache.js";
import { httpError } from "../api-errors.js";
import type { Exchange } from "./respond.js";

export interface StaticRoute {
  /** `query` is the raw query string, without the `?`. */
  serve(ex: Exchange, route: Route, query: string): Promise<void> | void;
}

/** The headers of a file's answers in one coding, after the CORS ones. */
interface FileHeaders {
  /** The headers of a 304, and the first of a 200's. */
  validators: string[];
  /** A 200's; made once the coding's bytes are known. */
  all?: string[];
}

/** A file's answers by coding (`identity` for the file as it is). */
type HeadersByCoding = Partial<Record<Coding | "identity", FileHeaders>>;

export function createStaticRoute(store: TreeStore, cache: FileCache, compression: CompressionCache): StaticRoute {
  const membership = new Map<string, PageIndex>();
  let membershipGen = "";
  const parsedLists = new Map<string, BlockList>();

  async function pagesOf(gen: Generation, orgId: string): Promise<PageIndex> {
    if (gen.id !== membershipGen) {
      membership.clear();
      parsedLists.clear();
      membershipGen = gen.id;
    }
    let pages = membership.get(orgId);
    if (!pages) {
      // Every generation has one per organization: one missing or unreadable is a broken tree (a logged 500), not a page with no blocks.
      pages = indexPages(JSON.parse(await readFile(pagesFileOf(gen, orgId), "utf8")) as PageMembership);
      membership.set(orgId, pages);
    }
    return pages;
  }

  const tagsOf = cacheTagMemo();

  // One file always answers one route, so a cached file's headers are built once per coding.
  const headersByFile = new WeakMap<CachedFile, HeadersByCoding>();
  function headersOf(route: Route, file: CachedFile, coding: Coding | null): FileHeaders {
    let byCoding = headersByFile.get(file);
    if (!byCoding) {
      byCoding = {};
      headersByFile.set(file, byCoding);
    }
    const name = coding ?? "identity";
    let headers = byCoding[name];
    if (!headers) {
      const etag = codedEtag(file.etag, coding);
      headers = { validators: ["ETag", etag, "Cache-Control", CACHE_CONTROL, "Cache-Tag", tagsOf(route, file.etag, () => file.bytes.toString("utf8"))] };
      byCoding[name] = headers;
    }
    return headers;
  }

  function allHeaders(file: CachedFile, headers: FileHeaders, sent: Representation): string[] {
    headers.all ??= [
      ...headers.validators,
      ...(sent.coding ? ["Content-Encoding", sent.coding] : []),
      "Content-Length",
      String(sent.bytes.length),
      // Tells clients and CDNs not to ask for a slice: they would get the whole document.
      "Accept-Ranges",
      "none",
      "Last-Modified",
      file.mtime.toUTCString(),
      "Content-Type",
      JSON_TYPE,
    ];
    return headers.all;
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

  /**
   * The coding is chosen from the request and the file's length alone, so a 304
   * names the ETag a 200 would carry without compressing anything.
   */
  function answer(ex: Exchange, route: Route, file: CachedFile): Promise<void> | void {
    const { req, res } = ex;
    const coding = file.bytes.length < MIN_COMPRESSED_BYTES ? null : codingOf(req.headers["accept-encoding"]);
    const headers = headersOf(route, file, coding);
    if (matchesIfNoneMatch(req.headers["if-none-match"], file.etag)) {
      res.writeHead(304, withBase(ex.baseHeaders, headers.validators));
      res.end();
      return;
    }
    const sent = coding ? compression.encode(file, coding) : file;
    if (sent instanceof Promise) return sent.then((coded) => send(ex, file, headers, coded));
    send(ex, file, headers, sent);
  }

  function send(ex: Exchange, file: CachedFile, headers: FileHeaders, sent: Representation): void {
    ex.res.writeHead(200, withBase(ex.baseHeaders, allHeaders(file, headers, sent)));
    if (ex.req.method === "HEAD") ex.res.end();
    else ex.res.end(sent.bytes);
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
    await answer(ex, route, file);
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


/** The request's common headers, with a file answer's own `Vary`, then `headers`. */
function withBase(base: Readonly<Record<string, string>>, headers: string[]): string[] {
  const all: string[] = [];
  for (const name in base) all.push(name, name === "Vary" ? FILE_VARY : base[name]!);
  for (const value of headers) all.push(value);
  return all;
}
