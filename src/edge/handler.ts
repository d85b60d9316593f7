/**
 * The read API at the edge: a `Request` in, a `Response` out, with web APIs
 * only (fetch, crypto.subtle, CompressionStream), so the same handler runs on
 * Cloudflare Workers and under Node. It answers every GET, HEAD and OPTIONS of
 * the contract as `cdsnap serve` does (key check, the D6 errors, `?pages=`,
 * per-organization CORS, ETag and 304, Cache-Control, Cache-Tag), from the
 * published tree and the edge document the build writes beside it. A PATCH of
 * a write route goes to the origin as it came, so a site keeps one base URL;
 * the origin checks it as it checks every PATCH. So does every read of a key
 * with the `preview` scope: the preview tree is the origin's alone (without
 * an origin, such a key reads the public tree, answered `private, no-store`).
 *
 * What it leaves to the platform: the failed-key rate limit of `serve` (an
 * isolate's memory is no place to count a site's clients), Host and Expect
 * handling, and URL normalisation (a Workers URL has its dot segments resolved
 * before any code sees it).
 */
import { httpError } from "../api-errors.js";
import { MAX_KEY_LENGTH } from "../api-http.js";
import { parseApiPath } from "../api-paths.js";
import { corsHeaders, decideRead, preflightAnswer, splitTarget } from "../api-reads.js";
import { CdsnapError } from "../errors.js";
import { isWriteRoute } from "../route-table.js";
import { createFileAnswer, errorAnswer } from "./answers.js";
import type { Compression } from "./compression.js";
import { createDirectorySource } from "./directory-source.js";
import { subtleSha256, type EdgeDirectory, type EdgeKey, type Sha256 } from "./edge-document.js";
import { createWriteThrough } from "./write-through.js";

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

async function authenticate(dir: EdgeDirectory, presented: string | null): Promise<EdgeKey> {
  if (presented === null || presented === "" || presented.length > MAX_KEY_LENGTH) throw httpError.unauthorized();
  const key = await dir.key(presented);
  if (!key || key.revoked) throw httpError.unauthorized();
  return key;
}

export function createEdgeHandler(options: EdgeOptions): EdgeHandler {
  const sha256Hex = options.sha256 ?? subtleSha256;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const origin = options.origin ? new URL(options.origin) : null;
  const clientAddress = options.clientAddress ?? ((request: Request) => request.headers.get("cf-connecting-ip"));
  const refreshMs = options.refreshMs ?? 1000;
  const currentDirectory = createDirectorySource({ document: options.document, refreshMs, clock: options.clock ?? Date.now, sha256: sha256Hex, onError });
  const writes = createWriteThrough({ tree: options.tree, currentDirectory, clientAddress, onError });
  const fileAnswer = createFileAnswer({ compression: options.compression ?? "gzip", sha256: sha256Hex });

  return async function handle(request) {
    const url = new URL(request.url);
    const { rawPath, query } = splitTarget(url.pathname + url.search);
    const route = parseApiPath(rawPath);
    const method = request.method;
    let cors = corsHeaders(undefined, null);
    try {
      if (origin && route && isWriteRoute(route) && method === "PATCH") return await writes.forward(request, origin, url.pathname + url.search, route);
      const dir = await currentDirectory();
      const requestOrigin = request.headers.get("origin");
      const allowed = route ? (dir.organization(route.orgId)?.allowedOrigins ?? null) : null;
      cors = corsHeaders(requestOrigin, allowed);
      if (method === "OPTIONS") return new Response(null, { status: 204, headers: preflightAnswer(route, requestOrigin, allowed) });
      const caller = await authenticate(dir, request.headers.get("x-api-key"));
      const decision = decideRead(method, route, caller);
      // With an origin, a PATCH went there before its key was looked at: the origin checks it.
      if (decision.kind === "write") throw new CdsnapError("method_not_allowed", NO_ORIGIN_FOR_WRITES, 405, undefined, { Allow: "OPTIONS" });
      // The edge holds no preview tree, and its document no preview content: the origin answers a preview key.
      const preview = caller.scopes.includes("preview");
      if (preview && origin) return await writes.relay(request, origin, url.pathname + url.search);
      const file = await writes.fileOfRoute(decision.route, dir);
      if (!file) throw httpError.notFound();
      return await fileAnswer(request, decision.route, file, query, cors, dir, preview);
    } catch (error) {
      return errorAnswer(request, error, cors, onError);
    }
  };
}
