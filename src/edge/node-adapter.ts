/**
 * The edge handler under Node, for a site without Workers: the tree read
 * from `--out` (through its link, so a build's swap is seen at once), the
 * edge document from beside it, and node:http in front. `cdsnap edge serve`
 * runs it; the bench measures it next to `cdsnap serve`.
 */
import { hash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Readable } from "node:stream";
import { liveGenerationSync, treeStoreOf } from "../emit/tree-store.js";
import { createFileCache } from "../server/file-cache.js";
import { HEAD_LIMITS, refuseLikeCdsnap, refuseOversizedHead } from "../server/client-error.js";
import { originFormOf } from "../server/request-head.js";
import type { Compression } from "./compression.js";
import { createEdgeHandler, type EdgeHandler, type TreeReader } from "./handler.js";
import { edgeDocumentFileOf } from "./publish-document.js";

/**
 * Tree files under `out`, through serve's file cache: bytes and their SHA-256
 * kept in memory while an lstat finds the same file, and a file read only
 * inside the live generation. The handler only ever asks for paths made from
 * a route, whose segments cannot climb out.
 */
export function fileTree(out: string): TreeReader {
  const store = treeStoreOf(out);
  const cache = createFileCache();
  return async (file) => {
    const key = `${store.out}/${file}`;
    let cached = cache.peek(key);
    if (!cached) {
      const gen = liveGenerationSync(store);
      if (!gen) return null;
      cached = await cache.get(path.join(gen.tree, file), { root: gen.tree, key });
    }
    // The cache's ETag is the quoted hex SHA-256 of the bytes.
    return cached && { bytes: cached.bytes, modified: cached.mtime, sha256: cached.etag.slice(1, -1) };
  };
}

export function fileDocument(out: string): () => Promise<string | null> {
  const file = edgeDocumentFileOf(out);
  return async () => {
    try {
      return await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  };
}

/**
 * Methods the fetch standard forbids in a Request (constructing one throws).
 * The handler answers any method it does not take alike (405 in its turn,
 * after the key check), so such a request reaches it under a name it does not
 * take either.
 */
const FORBIDDEN_IN_FETCH = new Set(["TRACE", "TRACK", "CONNECT"]);
const STAND_IN_METHOD = "UNSUPPORTED";

// The connection's own business: a forwarded answer's framing is node:http's to set again.
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]);

/** The address each request of {@link nodeListener} came from, for the handler's `clientAddress`. */
const clientAddresses = new WeakMap<Request, string>();

/** A node:http request listener that answers with `handler`. */
export function nodeListener(handler: EdgeHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (refuseOversizedHead(req, res)) return;
    void (async () => {
      const method = FORBIDDEN_IN_FETCH.has(req.method ?? "") ? STAND_IN_METHOD : (req.method ?? "GET");
      const hasBody = method !== "GET" && method !== "HEAD";
      const headers = new Headers();
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
      // Concatenated, not resolved: a target starting `//` is a path here, as it is to `serve`.
      const request = new Request(`http://edge.invalid${originFormOf(req.url ?? "/")}`, {
        method,
        headers,
        body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
        duplex: "half",
      } as RequestInit);
      if (req.socket.remoteAddress) clientAddresses.set(request, req.socket.remoteAddress);
      const answer = await handler(request);
      const out: string[] = [];
      answer.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name)) out.push(name, value);
      });
      // Whole: every answer is one JSON document, and one write costs less than a stream's chunks.
      const body = answer.body ? Buffer.from(await answer.arrayBuffer()) : undefined;
      res.writeHead(answer.status, out);
      res.end(body);
    })().catch((error: unknown) => {
      console.error(error);
      res.destroy();
    });
  };
}

export interface EdgeServeOptions {
  out: string;
  origin?: string | null;
  host?: string;
  port?: number;
  refreshMs?: number;
  compression?: Compression;
}

export interface RunningEdgeServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** The handler on node:http, over the tree at `out` and its edge document. */
export async function startEdgeServer(options: EdgeServeOptions): Promise<RunningEdgeServer> {
  const handler = createEdgeHandler({
    tree: fileTree(options.out),
    document: fileDocument(options.out),
    origin: options.origin,
    refreshMs: options.refreshMs,
    compression: options.compression,
    sha256: (bytes) => hash("sha256", bytes, "hex"),
    // The socket's: a CF-Connecting-IP a client sends here is its own word.
    clientAddress: (request) => clientAddresses.get(request),
  });
  const server = createServer(HEAD_LIMITS, nodeListener(handler));
  // Refused as `serve` refuses: the same limits on a head, the same answers of the parser's refusals.
  refuseLikeCdsnap(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8788, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
