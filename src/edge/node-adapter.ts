/**
 * The edge handler under Node, for a site without Workers: the tree read
 * from `--out` (through its link, so a build's swap is seen at once), the
 * edge document from beside it, and node:http in front. `cdsnap edge serve`
 * runs it; the bench measures it next to `cdsnap serve`.
 */
import { open, readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Readable } from "node:stream";
import { originFormOf } from "../server/request-head.js";
import type { Compression } from "./compression.js";
import { createEdgeHandler, type EdgeHandler, type TreeFile, type TreeReader } from "./handler.js";
import { edgeDocumentFileOf } from "./publish-document.js";

const MISSING = new Set(["ENOENT", "ENOTDIR", "EISDIR"]);

async function orNull<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (error) {
    if (MISSING.has((error as NodeJS.ErrnoException).code ?? "")) return null;
    throw error;
  }
}

/** Bytes and time from one descriptor, so they belong to the same file even while a rename replaces it. */
async function readTreeFile(file: string): Promise<TreeFile> {
  const handle = await open(file, "r");
  try {
    const info = await handle.stat();
    return { bytes: await handle.readFile(), modified: info.mtime };
  } finally {
    await handle.close();
  }
}

/** Tree files under `out`; the handler only ever asks for paths made from a route, whose segments cannot climb out. */
export function fileTree(out: string): TreeReader {
  return (file) => orNull(readTreeFile(path.join(out, file)));
}

export function fileDocument(out: string): () => Promise<string | null> {
  const file = edgeDocumentFileOf(out);
  return () => orNull(readFile(file, "utf8"));
}

// The connection's own business: a forwarded answer's framing is node:http's to set again.
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]);

/** A node:http request listener that answers with `handler`. */
export function nodeListener(handler: EdgeHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      const method = req.method ?? "GET";
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
      const answer = await handler(request);
      const out: string[] = [];
      answer.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name)) out.push(name, value);
      });
      res.writeHead(answer.status, out);
      if (!answer.body) {
        res.end();
        return;
      }
      for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
      res.end();
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
  });
  const server = createServer(nodeListener(handler));
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
