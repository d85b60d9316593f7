/**
 * The read API at the edge: a `Request` in, a `Response` out, with web APIs
 * only (fetch, crypto.subtle, CompressionStream), so the same handler runs on
 * Cloudflare Workers and under Node. It answers every GET, HEAD and OPTIONS of
 * the contract as `cdsnap serve` does (key check, the D6 errors, `?pages=`,
 * per-organization CORS, ETag and 304, Cache-Control, Cache-Tag), from the
 * published tree and the edge document the build writes beside it. A PATCH of
 * a write route goes to the origin as it came, so a site keeps one base URL;
 * the origin checks it as it checks every PATCH.
 *
 * What it leaves to the platform: the failed-key rate limit of `serve` (an
 * isolate's memory is no place to count a site's clients), Host and Expect
 * handling, and URL normalisation (a Workers URL has its dot segments resolved
 * before any code sees it).
 */
import { httpError } from "../api-errors.js";
import { CACHE_CONTROL, FILE_VARY, JSON_TYPE, MAX_KEY_LENGTH, NO_STORE, NOSNIFF, VARY } from "../api-http.js";
import { fileOf, parseApiPath, pathOf, type Route } from "../api-paths.js";
import {
  cacheTagMemo,
  corsHeaders,
  decideRead,
  errorBodyOf,
  knownError,
  filterBlocks,
  matchesIfNoneMatch,
  preflightAnswer,
  requestedPages,
  splitTarget,
  takesPages,
  type PageIndex,
} from "../api-reads.js";
import { CdsnapError } from "../errors.js";
import type { BlockList } from "../model/api.js";
import { canonicalJson } from "../render/canonical-json.js";
import { isWriteRoute, kindOf } from "../route-table.js";
import { codedEtag } from "../content-coding.js";
import { encodingFor, gzip, type Compression } from "./compression.js";
import { readEdgeDocument, subtleSha256, type EdgeDirectory, type Sha256 } from "./edge-document.js";

export interface TreeFile {
  bytes: Uint8Array;
  /** When the file was written, where the store knows (a file system, R2); static assets do not. */
  modified: Date | null;
  /** The SHA-256 of the bytes (hex), where the store keeps it: the handler then need not hash them again. */
  sha256?: string;
}

/** A tree file by its path relative to the tree (`api/organizations/demo/blocks.json`), or null when there is none. */
export type TreeReader = (file: string) => Promise<TreeFile | null>;

export interface EdgeOptions {
  tree: TreeReader;
  /** The edge document's text (see edge-document.ts), or null when there is none yet. */
  document: () => Promise<string | null>;
  /** Where a PATCH goes (`https://origin.example.com`); without one, a PATCH is refused with 405. */
  origin?: string | null;
  /** How often the document is read again (ms): a revocation reaches the handler within this. Default 1000. */
  refreshMs?: number;
  /** Default `gzip`: the handler compresses; `platform` where the platform does (Workers). */
  compression?: Compression;
  clock?: () => number;
  /**
   * SHA-256 of a key or an answer; default crypto.subtle. Under Node the
   * handler is given node:crypto's, whose one-shot hash costs a fraction of
   * the web API's round trip there.
   */
  sha256?: Sha256;
  /** An unexpected failure, answered with a plain 500. Default console.error. */
  onError?: (error: unknown) => void;
  /**
   * The address of the client that sent a request, appended to the
   * `X-Forwarded-For` of a PATCH passed to the origin, whose failed-key limit
   * counts per client (`--client-address-header x-forwarded-for`). Default
   * `CF-Connecting-IP`, which Workers sets to the visitor's address.
   */
  clientAddress?: (request: Request) => string | null | undefined;
}

export type EdgeHandler = (request: Request) => Promise<Response>;

const NO_ORIGIN_FOR_WRITES = "this edge has no origin to pass writes to; send the PATCH to the origin";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NO_PAGES: PageIndex = new Map();
const ORGANIZATION = kindOf("organization", "single");

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

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

export function createEdgeHandler(options: EdgeOptions): EdgeHandler {
  const refreshMs = options.refreshMs ?? 1000;
  const clock = options.clock ?? Date.now;
  const compression = options.compression ?? "gzip";
  const sha256Hex = options.sha256 ?? subtleSha256;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const origin = options.origin ? new URL(options.origin) : null;
  const clientAddress = options.clientAddress ?? ((request: Request) => request.headers.get("cf-connecting-ip"));
  // A file answer varies by Accept-Encoding even where the platform compresses it; an error does not.
  const base = (cors: Readonly<Record<string, string>>, vary = VARY) => ({ ...cors, Vary: vary, ...NOSNIFF });

  let directory: EdgeDirectory | null = null;
  let directoryText: string | null = null;
  let checkedAt = -Infinity;

  async function load(): Promise<EdgeDirectory> {
    const text = await options.document();
    if (text === null) throw new Error("there is no edge document: run cdsnap build, or cdsnap edge keys, and publish it");
    if (text !== directoryText || !directory) {
      directory = readEdgeDocument(text, sha256Hex);
      directoryText = text;
    }
    return directory;
  }

  /**
   * The edge document, read again once `refreshMs` has passed. No load is
   * shared between requests: Workers ties a promise to the request that made it.
   * A document that fails to load keeps the last good one (and is logged); with
   * none at all, every answer that needs it is a 500.
   */
  async function currentDirectory(): Promise<EdgeDirectory> {
    const last = directory;
    if (last && clock() - checkedAt < refreshMs) return last;
    try {
      const loaded = await load();
      checkedAt = clock();
      return loaded;
    } catch (error) {
      if (!last) throw error;
      onError(error);
      checkedAt = clock();
      return last;
    }
  }

  async function authenticate(dir: EdgeDirectory, presented: string | null): Promise<{ orgId: string }> {
    if (presented === null || presented === "" || presented.length > MAX_KEY_LENGTH) throw httpError.unauthorized();
    const key = await dir.key(presented);
    if (!key || key.revoked) throw httpError.unauthorized();
    return key;
  }

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

  function errorAnswer(request: Request, error: unknown, cors: Readonly<Record<string, string>>): Response {
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

  /**
   * Organization files a PATCH passed through this edge rewrote, fetched from
   * the origin right after it, each kept until another document, written in
   * or after the second the origin answered it, has arrived (`serve` writes
   * one after each PATCH, which carries the file or a later one): the PATCH's
   * author reads their write at once, not when the document comes round.
   */
  const rewritten = new Map<string, TreeFile & { modified: Date; seen: EdgeDirectory }>();

  async function forward(request: Request, origin: URL, target: string, route: Route): Promise<Response> {
    const headers = new Headers(request.headers);
    // The answer is passed on as it comes: a runtime that decodes it on the way (Node's fetch) must get it plain.
    headers.set("accept-encoding", "identity");
    headers.delete("host");
    // Appended last, after whatever the client wrote there: the entry the origin counts is the one this edge vouches for.
    const client = clientAddress(request);
    if (client) headers.set("x-forwarded-for", [headers.get("x-forwarded-for"), client].filter(Boolean).join(", "));
    const answer = await fetch(new URL(target, origin), {
      method: request.method,
      headers,
      body: request.body,
      redirect: "manual",
      // Node's fetch streams a request body only when told it is half-duplex.
      duplex: "half",
    } as RequestInit);
    const answeredAt = Date.parse(answer.headers.get("date") ?? "");
    if (answer.ok && Number.isFinite(answeredAt)) {
      // The PATCH is committed whatever becomes of the copy: its answer goes out all the same.
      await keepRewritten(origin, route.orgId, headers.get("x-api-key"), answeredAt).catch(onError);
    }
    return answer;
  }

  /**
   * Fetches the organization file a PATCH the origin answered at `answeredAt`
   * (its `Date`, to the second) rewrote, with the PATCH's key (every key
   * reads). Any other answer (no file published) leaves no copy.
   */
  async function keepRewritten(origin: URL, orgId: string, key: string | null, answeredAt: number): Promise<void> {
    const target = new URL(pathOf({ kind: "organization", orgId }), origin);
    const read = await fetch(target, { headers: { "x-api-key": key ?? "", "accept-encoding": "identity" } });
    if (!read.ok) {
      await read.body?.cancel();
      return;
    }
    const bytes = new Uint8Array(await read.arrayBuffer());
    rewritten.set(orgId, { bytes, modified: new Date(answeredAt), seen: await currentDirectory() });
  }

  /**
   * A route's file. The organization file is the newest copy at hand: one a
   * PATCH through this edge rewrote; else the document's where it differs
   * from the tree's, unless the tree's is known to be newer (a tree on a file
   * system the origin rewrites in place). Static assets are the last deploy's.
   */
  async function fileOfRoute(route: Route, dir: EdgeDirectory): Promise<TreeFile | null> {
    if (route.kind !== ORGANIZATION) return options.tree(fileOf(route));
    const own = rewritten.get(route.orgId);
    if (own && (dir === own.seen || dir.writtenAtMs < own.modified.getTime())) return own;
    rewritten.delete(route.orgId);
    const tree = await options.tree(fileOf(route));
    const carried = dir.organization(route.orgId)?.file;
    if (!carried || (tree && (sameBytes(tree.bytes, carried) || (tree.modified !== null && tree.modified.getTime() > dir.writtenAtMs)))) return tree;
    return { bytes: carried, modified: new Date(dir.writtenAtMs) };
  }

  async function fileAnswer(request: Request, route: Route, query: string, cors: Readonly<Record<string, string>>, dir: EdgeDirectory): Promise<Response> {
    const file = await fileOfRoute(route, dir);
    if (!file) throw httpError.notFound();
    let bytes = file.bytes;
    const pages = takesPages(route) && query !== "" ? requestedPages(new URLSearchParams(query)) : null;
    if (pages) {
      const list = JSON.parse(decoder.decode(bytes)) as BlockList;
      bytes = encoder.encode(canonicalJson(filterBlocks(list, dir.organization(route.orgId)?.pages ?? NO_PAGES, pages)));
    }
    const sha = !pages && file.sha256 ? file.sha256 : await sha256Hex(bytes);
    const answered = bytes;
    const tags = tagsOf(route, sha, () => decoder.decode(answered));
    const encoding = encodingFor(compression, request.headers.get("accept-encoding"), bytes.length);
    const etag = `"${sha}"`;
    const validators = { ETag: codedEtag(etag, encoding), "Cache-Control": CACHE_CONTROL, "Cache-Tag": tags };
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
  }

  return async function handle(request) {
    const url = new URL(request.url);
    const { rawPath, query } = splitTarget(url.pathname + url.search);
    const route = parseApiPath(rawPath);
    const method = request.method;
    let cors = corsHeaders(undefined, null);
    try {
      if (origin && route && isWriteRoute(route) && method === "PATCH") return await forward(request, origin, url.pathname + url.search, route);
      const dir = await currentDirectory();
      const requestOrigin = request.headers.get("origin");
      const allowed = route ? (dir.organization(route.orgId)?.allowedOrigins ?? null) : null;
      cors = corsHeaders(requestOrigin, allowed);
      if (method === "OPTIONS") return new Response(null, { status: 204, headers: preflightAnswer(route, requestOrigin, allowed) });
      const caller = await authenticate(dir, request.headers.get("x-api-key"));
      const decision = decideRead(method, route, caller);
      // With an origin, a PATCH went there before its key was looked at: the origin checks it.
      if (decision.kind === "write") throw new CdsnapError("method_not_allowed", NO_ORIGIN_FOR_WRITES, 405, undefined, { Allow: "OPTIONS" });
      return await fileAnswer(request, decision.route, query, cors, dir);
    } catch (error) {
      return errorAnswer(request, error, cors);
    }
  };
}
