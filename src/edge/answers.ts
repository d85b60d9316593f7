/**
 * The answers with a body the handler builds itself: a tree file's (`?pages=`,
 * ETag and 304, Cache-Tag, gzip kept in a bounded memo) and an error's, on the
 * headers both carry.
 */
import { CACHE_CONTROL, FILE_VARY, JSON_TYPE, NO_STORE, NOSNIFF, PREVIEW_CACHE_CONTROL, VARY } from "../api-http.js";
import type { Route } from "../api-paths.js";
import { cacheTagMemo, errorBodyOf, filterBlocks, knownError, matchesIfNoneMatch, requestedPages, takesPages, type PageIndex } from "../api-reads.js";
import { codedEtag } from "../content-coding.js";
import type { BlockList } from "../model/api.js";
import { canonicalJson } from "../render/canonical-json.js";
import { encodingFor, gzip, type Compression } from "./compression.js";
import type { EdgeDirectory, Sha256 } from "./edge-document.js";
import type { TreeFile } from "./handler.js";

export interface FileAnswerOptions {
  compression: Compression;
  sha256: Sha256;
}

/**
 * The answer to a GET or HEAD of a route whose file is `file`; `preview`: to
 * a key with the preview scope, which no shared cache may keep (no Cache-Tag).
 */
export type FileAnswer = (
  request: Request,
  route: Route,
  file: TreeFile,
  query: string,
  cors: Readonly<Record<string, string>>,
  dir: EdgeDirectory,
  preview?: boolean,
) => Promise<Response>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NO_PAGES: PageIndex = new Map();

// A file answer varies by Accept-Encoding even where the platform compresses it; an error does not.
const base = (cors: Readonly<Record<string, string>>, vary = VARY) => ({ ...cors, Vary: vary, ...NOSNIFF });

/** A bounded memo: the oldest entries go first once it holds more than `limit` units. */
function boundedMap<V>(limit: number, sizeOf: (value: V) => number) {
  const entries = new Map<string, V>();
  let total = 0;
  return {
    get: (key: string) => entries.get(key),
    set(key: string, value: V) {
      if (entries.has(key)) return;
      entries.set(key, value);
      total += sizeOf(value);
      for (const [oldKey, old] of entries) {
        if (total <= limit) break;
        entries.delete(oldKey);
        total -= sizeOf(old);
      }
    },
  };
}

export function errorAnswer(request: Request, error: unknown, cors: Readonly<Record<string, string>>, onError: (error: unknown) => void): Response {
  const known = knownError(error, onError);
  const body = encoder.encode(errorBodyOf(known));
  return new Response(request.method === "HEAD" ? null : body, {
    status: known.status,
    headers: {
      ...base(cors),
      "Content-Type": JSON_TYPE,
      "Content-Length": String(body.length),
      "Cache-Control": NO_STORE,
      ...known.headers,
    },
  });
}

export function createFileAnswer(options: FileAnswerOptions): FileAnswer {
  const { compression, sha256: sha256Hex } = options;
  const tagsOf = cacheTagMemo();
  const gzipMemo = boundedMap<Uint8Array>(32 * 1024 * 1024, (bytes) => bytes.length);

  async function gzipped(sha: string, bytes: Uint8Array): Promise<Uint8Array> {
    let packed = gzipMemo.get(sha);
    if (!packed) {
      packed = await gzip(bytes);
      gzipMemo.set(sha, packed);
    }
    return packed;
  }

  return async function fileAnswer(request, route, file, query, cors, dir, preview = false) {
    let bytes = file.bytes;
    const pages = takesPages(route) && query !== "" ? requestedPages(new URLSearchParams(query)) : null;
    if (pages) {
      const list = JSON.parse(decoder.decode(bytes)) as BlockList;
      bytes = encoder.encode(canonicalJson(filterBlocks(list, dir.organization(route.orgId)?.pages ?? NO_PAGES, pages)));
    }
    const sha = !pages && file.sha256 ? file.sha256 : await sha256Hex(bytes);
    const answered = bytes;
    const encoding = encodingFor(compression, request.headers.get("accept-encoding"), bytes.length);
    const etag = `"${sha}"`;
    const validators: Record<string, string> = preview
      ? { ETag: codedEtag(etag, encoding), "Cache-Control": PREVIEW_CACHE_CONTROL }
      : { ETag: codedEtag(etag, encoding), "Cache-Control": CACHE_CONTROL, "Cache-Tag": tagsOf(route, sha, () => decoder.decode(answered)) };
    if (matchesIfNoneMatch(request.headers.get("if-none-match"), etag)) {
      return new Response(null, { status: 304, headers: { ...base(cors, FILE_VARY), ...validators } });
    }
    const body = encoding ? await gzipped(sha, bytes) : bytes;
    return new Response(request.method === "HEAD" ? null : body, {
      status: 200,
      headers: {
        ...base(cors, FILE_VARY),
        ...validators,
        "Content-Length": String(body.length),
        // Tells clients and CDNs not to ask for a slice: they would get the whole document.
        "Accept-Ranges": "none",
        // Static assets carry no file time: the edge document's is the closest a deployment knows.
        "Last-Modified": (file.modified ?? new Date(dir.writtenAt)).toUTCString(),
        "Content-Type": JSON_TYPE,
        ...(encoding ? { "Content-Encoding": encoding } : {}),
      },
    });
  };
}
