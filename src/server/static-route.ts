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
 *
 * A key with the `preview` scope reads the posts part's files (the contents
 * list, its pages and each category's, a post by id, by slug, its references:
 * `partOfFile`) from the preview tree beside `--out`
 * when a `build --preview` made one, and every other file from the public
 * tree, the one the write proxy keeps up to date and that both trees render
 * alike; its answers are `private, no-store` and carry no Cache-Tag.
 */
import path from "node:path";
import { matchesIfNoneMatch, requestedPages, takesPages } from "../api-reads.js";
import { fileOf, partOfFile, type Route } from "../api-paths.js";
import { liveGenerationSync, type TreeStore } from "../emit/tree-store.js";
import { codingOf, MIN_COMPRESSED_BYTES } from "../content-coding.js";
import type { CompressionCache, Representation } from "./compression.js";
import type { CachedFile, FileCache } from "./file-cache.js";
import { allHeaders, fileHeadersMemo, withBase, type FileHeaders, type HeadersOf } from "./file-headers.js";
import { httpError } from "../api-errors.js";
import { createPagesFilter } from "./pages-filter.js";
import type { Exchange } from "./respond.js";

export interface StaticRoute {
  /** `query` is the raw query string, without the `?`; `preview`: the caller's key has the preview scope. */
  serve(ex: Exchange, route: Route, query: string, preview?: boolean): Promise<void> | void;
}

/** `previewStore`: where `build --preview` writes the preview tree, whether or not one is there. */
export function createStaticRoute(store: TreeStore, cache: FileCache, compression: CompressionCache, previewStore: TreeStore | null = null): StaticRoute {
  const filtered = createPagesFilter();
  const headersByAudience = { public: fileHeadersMemo("public"), preview: fileHeadersMemo("preview") };

  /**
   * The coding is chosen from the request and the file's length alone, so a 304
   * names the ETag a 200 would carry without compressing anything.
   */
  function answer(ex: Exchange, route: Route, file: CachedFile, headersOf: HeadersOf): Promise<void> | void {
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
  const keyOf = (from: TreeStore, rel: string) => `${from.out}/${rel}`;

  /** The tree a file is read from: a post file of a preview key's, from the preview tree when there is one. */
  const storeOf = (rel: string, preview: boolean): TreeStore =>
    preview && previewStore !== null && partOfFile(rel) === "posts" && liveGenerationSync(previewStore) !== null ? previewStore : store;

  async function loadAndAnswer(ex: Exchange, route: Route, rel: string, query: string, from: TreeStore, headersOf: HeadersOf): Promise<void> {
    const gen = liveGenerationSync(from);
    if (!gen) throw httpError.notFound();
    let file = await cache.get(path.join(gen.tree, rel), { root: gen.tree, key: keyOf(from, rel) });
    if (!file) throw httpError.notFound();
    const pages = takesPages(route) && query !== "" ? requestedPages(new URLSearchParams(query)) : null;
    if (pages) file = await filtered(gen, route.orgId, file, pages);
    await answer(ex, route, file, headersOf);
  }

  return {
    serve(ex, route, query, preview = false) {
      const rel = fileOf(route);
      const from = storeOf(rel, preview);
      const headersOf = headersByAudience[preview ? "preview" : "public"];
      // A cached file is answered without a turn of the event loop; a miss and ?pages= await.
      const cached = takesPages(route) && query !== "" ? null : cache.peek(keyOf(from, rel));
      return cached ? answer(ex, route, cached, headersOf) : loadAndAnswer(ex, route, rel, query, from, headersOf);
    },
  };
}
