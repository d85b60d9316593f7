/**
 * `cdsnap serve`: the origin a CDN sits in front of. Serves the built tree
 * (GET, HEAD) behind the API-key check, answers CORS preflights, and is the
 * write proxy for the two PATCH endpoints. It never builds (D14); on start it
 * brings every organization file up to its database row, which repairs a crash
 * between a PATCH's commit and its file rename.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WRITE_ROUTES, parseApiPath, type Route } from "../api-paths.js";
import { openContractDatabase } from "../db/contract-schema.js";
import type { Db } from "../db/open.js";
import { listOrgIds } from "../db/read-snapshot.js";
import { refreshOrganizationFiles } from "../emit/organization-file.js";
import { treeStoreOf } from "../emit/tree-store.js";
import { createAuthCache, type AuthCache } from "./auth.js";
import { answerClientError } from "./client-error.js";
import { corsHeaders, preflightHeaders } from "./cors.js";
import { createFileCache } from "./file-cache.js";
import { httpError } from "./http-errors.js";
import { createRateLimiter } from "./rate-limit.js";
import { sendError, type Exchange, type Logger } from "./respond.js";
import { createStaticRoute } from "./static-route.js";
import { createWriteProxy } from "./write-proxy.js";

export const DEFAULT_WRITE_RATE = 60;

export interface ServeOptions {
  db: string;
  out: string;
  host?: string;
  port?: number;
  /** PATCH requests a minute per key (D6). */
  writeRate?: number;
  /** One JSON object per call; defaults to a line on stdout. */
  log?: Logger;
  clock?: () => number;
  /** How often the key cache looks for database changes (ms). */
  authRefreshMs?: number;
  /** Limits on slow clients; the defaults suit production, tests shorten them. */
  timeouts?: ServerTimeouts;
}

export interface ServerTimeouts {
  /** The whole header block must arrive within this (slowloris); default 10 s. */
  headersMs?: number;
  /** The whole request, body included, must arrive within this; default 30 s. */
  requestMs?: number;
  /** An idle keep-alive connection is closed after this; default 5 s. */
  keepAliveMs?: number;
  /** How often expired requests are looked for: a timeout fires at most this late; default 1 s. */
  checkIntervalMs?: number;
}

export const DEFAULT_TIMEOUTS: Required<ServerTimeouts> = Object.freeze({
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  checkIntervalMs: 1_000,
});

export interface RunningServer {
  url: string;
  server: Server;
  db: Db;
  /** Stops accepting, lets in-flight requests finish (at most `graceMs`), closes the database. */
  close(graceMs?: number): Promise<void>;
}

const VARY = "x-api-key, Origin";
// Every answer is JSON: nosniff keeps a browser from ever reading stored text (a `<script>` in a description) as HTML.
const BASE_HEADERS = Object.freeze({ Vary: VARY, "X-Content-Type-Options": "nosniff" });
// The headers of most answers, built once: spreading them together per request was a measurable cost.
const ANY_ORIGIN_HEADERS = Object.freeze({ ...corsHeaders(undefined, null), ...BASE_HEADERS });
const GET_METHODS = "GET, HEAD, OPTIONS";
const PATCH_METHODS = "PATCH, OPTIONS";

// Lines are gathered and written once per turn of the event loop: one write
// per request was a measurable share of a busy server's time.
let pendingLines: string[] = [];
function flushLog(): void {
  if (pendingLines.length === 0) return;
  const text = pendingLines.join("");
  pendingLines = [];
  process.stdout.write(text);
}

// A busy server logs many lines within one millisecond; formatting its time once is enough.
let lastMs = NaN;
let lastTime = "";
function timeNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = new Date(now).toISOString();
  }
  return lastTime;
}

export const defaultLogger: Logger = (line) => {
  if (pendingLines.length === 0) setImmediate(flushLog);
  pendingLines.push(`${JSON.stringify({ time: timeNow(), ...line })}\n`);
};

function splitUrl(url: string): { rawPath: string; query: string } {
  const q = url.indexOf("?");
  let rawPath = q === -1 ? url : url.slice(0, q);
  // D10: one trailing slash is tolerated and answers like the path without it.
  if (rawPath.length > 1 && rawPath.endsWith("/")) rawPath = rawPath.slice(0, -1);
  return { rawPath, query: q === -1 ? "" : url.slice(q + 1) };
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? defaultLogger;
  const clock = options.clock ?? Date.now;
  const db = openContractDatabase(options.db, { wal: true });
  const store = treeStoreOf(options.out);
  refreshOrganizationFiles(db, store, listOrgIds(db));

  const auth = createAuthCache(db, clock, options.authRefreshMs);
  const statics = createStaticRoute(store, createFileCache());
  const proxy = createWriteProxy(db, store);
  const limiter = createRateLimiter(options.writeRate ?? DEFAULT_WRITE_RATE, clock);
  let inFlight = 0;
  let drained: (() => void) | null = null;

  async function dispatch(ex: Exchange, auth: AuthCache, rawPath: string, query: string): Promise<void> {
    const { req, res } = ex;
    const route: Route | null = parseApiPath(rawPath);
    const origin = req.headers.origin;
    const allowed = route ? auth.allowedOrigins(route.orgId) : null;
    ex.baseHeaders = allowed === null ? ANY_ORIGIN_HEADERS : { ...corsHeaders(origin, allowed), ...BASE_HEADERS };

    if (req.method === "OPTIONS") {
      if (!route) throw httpError.notFound();
      res.writeHead(204, {
        ...preflightHeaders(origin, allowed),
        Vary: VARY,
        Allow: WRITE_ROUTES.has(route.kind) ? PATCH_METHODS : GET_METHODS,
      });
      res.end();
      return;
    }

    const caller = auth.authenticate(req.headers["x-api-key"]);
    ex.keyId = caller.keyId;
    if (!route) throw httpError.notFound();
    if (route.orgId !== caller.orgId) throw httpError.forbidden();

    if (route.kind === "businessDescription" || route.kind === "businessOffers") {
      if (req.method !== "PATCH") throw httpError.methodNotAllowed(PATCH_METHODS);
      if (!caller.scopes.has("write")) throw httpError.insufficientScope();
      const wait = limiter.take(caller.keyId);
      if (wait > 0) throw httpError.rateLimited(wait);
      await proxy.patch(ex, route);
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") throw httpError.methodNotAllowed(GET_METHODS);
    await statics.serve(ex, route, query);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    inFlight++;
    const ex: Exchange = { req, res, started: process.hrtime.bigint(), baseHeaders: BASE_HEADERS };
    const { rawPath, query } = splitUrl(req.url ?? "/");
    // "close" comes once per request, after "finish" or instead of it when the connection broke off.
    res.once("close", () => {
      const line: Record<string, unknown> = {
        method: req.method,
        path: rawPath,
        status: res.statusCode,
        ms: Number((process.hrtime.bigint() - ex.started) / 1000n) / 1000,
        keyId: ex.keyId ?? null,
      };
      if (!res.writableFinished) line.aborted = true;
      log(line);
    });
    try {
      await dispatch(ex, auth, rawPath, query);
    } catch (error) {
      sendError(ex, error, log);
    } finally {
      if (--inFlight === 0) drained?.();
    }
  }

  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const server = createHttpServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // Node looks for expired requests every 30 s by default: a 10 s header timeout could take 40.
      connectionsCheckingInterval: timeouts.checkIntervalMs,
    },
    (req, res) => {
      void handle(req, res);
    },
  );
  server.on("clientError", answerClientError);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8787, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    server,
    db,
    async close(graceMs = 10_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        await Promise.race([
          new Promise<void>((resolve) => (drained = resolve)),
          new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref()),
        ]);
      }
      server.closeAllConnections();
      await closed;
      proxy.flush();
      db.close();
      flushLog();
    },
  };
}
