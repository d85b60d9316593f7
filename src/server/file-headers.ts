/**
 * The headers of a file's answers, as the flat name-value lists writeHead
 * takes: built once per cached file and coding, then only prefixed with the
 * request's common headers.
 */
import { CACHE_CONTROL, FILE_VARY, JSON_TYPE, PREVIEW_CACHE_CONTROL } from "../api-http.js";
import { cacheTagMemo } from "../api-reads.js";
import type { Route } from "../api-paths.js";
import { codedEtag, type Coding } from "../content-coding.js";
import type { Representation } from "./compression.js";
import type { CachedFile } from "./file-cache.js";

/** The headers of a file's answers in one coding, after the CORS ones. */
export interface FileHeaders {
  /** The headers of a 304, and the first of a 200's. */
  validators: string[];
  /** A 200's; made once the coding's bytes are known. */
  all?: string[];
}

/** A file's answers by coding (`identity` for the file as it is). */
type HeadersByCoding = Partial<Record<Coding | "identity", FileHeaders>>;

export type HeadersOf = (route: Route, file: CachedFile, coding: Coding | null) => FileHeaders;

/**
 * `audience` "preview": the headers of the answers to a preview key, which no
 * shared cache may keep, and so carry no Cache-Tag to purge them by.
 */
export function fileHeadersMemo(audience: "public" | "preview" = "public"): HeadersOf {
  const tagsOf = cacheTagMemo();

  // One file always answers one route, so a cached file's headers are built once per coding.
  const headersByFile = new WeakMap<CachedFile, HeadersByCoding>();
  return function headersOf(route, file, coding) {
    let byCoding = headersByFile.get(file);
    if (!byCoding) {
      byCoding = {};
      headersByFile.set(file, byCoding);
    }
    const name = coding ?? "identity";
    let headers = byCoding[name];
    if (!headers) {
      const etag = codedEtag(file.etag, coding);
      headers = {
        validators:
          audience === "preview"
            ? ["ETag", etag, "Cache-Control", PREVIEW_CACHE_CONTROL]
            : ["ETag", etag, "Cache-Control", CACHE_CONTROL, "Cache-Tag", tagsOf(route, file.etag, () => file.bytes.toString("utf8"))],
      };
      byCoding[name] = headers;
    }
    return headers;
  };
}

export function allHeaders(file: CachedFile, headers: FileHeaders, sent: Representation): string[] {
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

/** The request's common headers, with a file answer's own `Vary`, then `headers`. */
export function withBase(base: Readonly<Record<string, string>>, headers: string[]): string[] {
  const all: string[] = [];
  for (const name in base) all.push(name, name === "Vary" ? FILE_VARY : base[name]!);
  for (const value of headers) all.push(value);
  return all;
}
