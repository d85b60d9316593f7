/**
 * `cdsnap serve`: the origin a CDN sits in front of. Serves the built tree
 * (GET, HEAD) behind the API-key check, answers CORS preflights, and is the
 * write proxy for the two PATCH endpoints. It never builds (D14), and refuses to
 * start where no build has published a tree; on start it brings every
 * organization file up to its database row, which repairs a crash between a
 * PATCH's commit and its file rename.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { NOSNIFF, VARY } from "../api-http.js";
import { corsHeaders, decideRead, preflightAnswer, splitTarget } from "../api-reads.js";
import { parseApiPath, type Route } from "../api-paths.js";
import { openContractDatabase } from "../db/contract-schema.js";
import type { Db } from "../db/open.js";
import { listOrgIds } from "../db/read-snapshot.js";
import { refreshOrganizationFiles } from "../emit/organization-file.js";
import { treeStoreOf } from "../emit/tree-store.js";
import { CdsnapError } from "../errors.js";
import { createAuthCache, DEFAULT_AUTH_REFRESH_MS, type AuthCache, type Caller } from "./auth.js";
import { createCompressionCache } from "./compression.js";
import { edgeDocumentWriter } from "../edge/publish-document.js";
import { HEAD_LIMITS, refuseLikeCdsnap, refuseOversizedHead } from "./client-error.js";
import { createFileCache } from "./file-cache.js";
import { httpError } from "../api-errors.js";
import { createRateLimiter, DEFAULT_AUTH_FAILURE_RATE, DEFAULT_WRITE_RATE } from "./rate-limit.js";
import { countHeader, forwardedAddressOf, originFormOf } from "./request-head.js";
import { sendError, type Exchange, type Logger } from "./respond.js";
import { accessChange, patchChange, type Change } from "../on-change/change-set.js";
import { watchAccess } from "./access-watch.js";
import { watchCommits } from "../db/watch-commits.js";
import { assertPublishedTree } from "./published-tree.js";
import { createStaticRoute } from "./static-route.js";
import { createWriteProxy } from "./write-proxy.js";

export interface ServeOptions {
  db: string;
  out: string;
  host?: string;
  port?: number;
  /** PATCH requests a minute per key (D6). */
  writeRate?: number;
  /** Failed authentications a minute per client address before it gets 429; 0 turns the limit off. */
  authFailureRate?: number;
  /**
   * A header the proxy or CDN in front of the server sets to the client's
   * address (`x-forwarded-for`, `cf-connecting-ip`, …): the failed-key limit
   * then counts per client instead of per edge. Only for a server every
   * request reaches through that proxy: anyone else could write the header.
   */
  clientAddressHeader?: string;
  /** One JSON object per call; defaults to a line on stdout. */
  log?: Logger;
  clock?: () => number;
  /** How often the database is looked at for another connection's commit (keys, origins), in ms. */
  authRefreshMs?: number;
  /** Limits on slow clients; the defaults suit production, tests shorten them. */
  timeouts?: ServerTimeouts;
  /**
   * Told of every change that makes answers a cache holds stale: a PATCH's
   * organization file, a file repaired on start, an organization whose keys or
   * allowed origins changed. Called synchronously; it must not block (the
   * on-change hook only records the change).
   */
  onChange?: (change: Change) => void;
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

const BASE_HEADERS = Object.freeze({ Vary: VARY, ...NOSNIFF });
// The headers of most answers, built once: spreading them together per request was a measurable cost.
const ANY_ORIGIN_HEADERS = Object.freeze({ ...corsHeaders(undefined, null), ...BASE_HEADERS });

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

const ONE_HOST = "the request must carry exactly one Host header (HTTP/1.0 at most one)";
const AUTH_FAILURES = "too many requests without a valid API key from this address";

/** RFC 9112 §3.2: Node's own check of it answers without the D6 body, so the server makes it. */
function checkHost(req: IncomingMessage): void {
  const hosts = countHeader(req.rawHeaders, "host");
  if (hosts > 1 || (hosts === 0 && req.httpVersionMajor === 1 && req.httpVersionMinor === 1)) throw httpError.badRequest(ONE_HOST);
}

/** How Node handed a request over: its own event, or the event of an `Expect` header. */
type Arrival = "request" | "checkContinue" | "checkExpectation";

// RFC 9112 §9.3.2: pipelined requests may be processed in parallel only while all are safe.
const isSafe = (method: string | undefined) => method === "GET" || method === "HEAD" || method === "OPTIONS";

/**
 * Settles once every earlier answer on the request's connection has been sent
 * (Node gives a queued response its socket only then), or once the connection
 * closed.
 */
function earlierAnswered(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (res.socket) return Promise.resolve();
  return new Promise((resolve) => {
    const settle = () => {
      res.off("socket", settle);
      req.off("close", settle);
      resolve();
    };
    res.once("socket", settle);
    req.once("close", settle);
  });
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? defaultLogger;
  const clock = options.clock ?? Date.now;
  assertPublishedTree(options.out, options.db);
  const db = openContractDatabase(options.db, { wal: true });
  const store = treeStoreOf(options.out);
  const { onChange } = options;
  // The edge document carries the organization files, which PATCHes rewrite.
  const writeEdgeDocument = edgeDocumentWriter(db, options.out, (error) => log({ level: "error", msg: "edge document not written", error: String(error) }));
  const repaired = [...refreshOrganizationFiles(db, store, listOrgIds(db))].filter(([, result]) => result?.written).map(([orgId]) => orgId);
  if (repaired.length > 0) writeEdgeDocument(repaired);
  if (onChange && repaired.length > 0) onChange(patchChange(repaired));

  const auth = createAuthCache(db);
  const statics = createStaticRoute(store, createFileCache(), createCompressionCache());
  const proxy = createWriteProxy(db, store, (change) => {
    writeEdgeDocument(change.orgs);
    onChange?.(change);
  });
  const access = onChange ? watchAccess(db, (orgIds) => onChange(accessChange(orgIds))) : null;
  const commits = watchCommits(
    db,
    options.authRefreshMs ?? DEFAULT_AUTH_REFRESH_MS,
    () => {
      auth.reload();
      access?.onCommit();
    },
    (error) => log({ level: "error", msg: "keys not read again after a commit", error: String(error) }),
  );
  const limiter = createRateLimiter(options.writeRate ?? DEFAULT_WRITE_RATE, clock);
  const authFailureRate = options.authFailureRate ?? DEFAULT_AUTH_FAILURE_RATE;
  const authFailures = authFailureRate > 0 ? createRateLimiter(authFailureRate, clock) : null;
  const addressHeader = options.clientAddressHeader?.toLowerCase();
  const clientAddress = (req: IncomingMessage): string =>
    (addressHeader && forwardedAddressOf(req.rawHeaders, addressHeader)) || (req.socket.remoteAddress ?? "");
  let forwardedNoted = addressHeader !== undefined || authFailures === null;
  /**
   * Behind a proxy, every request comes from the proxy's address: without
   * --client-address-header, one client's failed keys count against all of
   * them. Said once, on the first request that shows a proxy.
   */
  function noteForwarded(req: IncomingMessage): void {
    if (forwardedNoted || (req.headers["x-forwarded-for"] === undefined && req.headers.forwarded === undefined)) return;
    forwardedNoted = true;
    log({
      level: "warn",
      msg: "forwarded without --client-address-header",
      detail:
        "requests arrive through a proxy (they carry X-Forwarded-For or Forwarded), and failed keys are counted per address: every client behind it shares the proxy's, so one client sending bad keys gets all of them refused with 429; set --client-address-header to the header the proxy writes the client's address in",
    });
  }
  let inFlight = 0;
  let drained: (() => void) | null = null;

  /**
   * The caller of a request, or the D5 refusal. Failures are counted per
   * client address, and an address out of allowance is refused before its key
   * is even hashed: guessing keys costs the server next to nothing.
   */
  function authenticate(req: IncomingMessage): Caller {
    noteForwarded(req);
    if (!authFailures) return auth.authenticate(req.headers["x-api-key"]);
    const address = clientAddress(req);
    const wait = authFailures.wait(address);
    if (wait > 0) throw httpError.rateLimited(wait, AUTH_FAILURES);
    try {
      return auth.authenticate(req.headers["x-api-key"]);
    } catch (error) {
      if (error instanceof CdsnapError && error.status === 401) authFailures.take(address);
      throw error;
    }
  }

  async function dispatch(ex: Exchange, auth: AuthCache, rawPath: string, query: string, arrival: Arrival): Promise<void> {
    const { req, res } = ex;
    if (refuseOversizedHead(req, res)) return;
    checkHost(req);
    if (arrival === "checkExpectation") throw httpError.expectationFailed();
    const route: Route | null = parseApiPath(rawPath);
    const origin = req.headers.origin;
    const allowed = route ? auth.allowedOrigins(route.orgId) : null;
    ex.baseHeaders = allowed === null ? ANY_ORIGIN_HEADERS : { ...corsHeaders(origin, allowed), ...BASE_HEADERS };

    if (req.method === "OPTIONS") {
      res.writeHead(204, preflightAnswer(route, origin, allowed));
      res.end();
      return;
    }

    const caller = authenticate(req);
    ex.keyId = caller.keyId;
    const decision = decideRead(req.method, route, caller);
    if (decision.kind === "file") {
      await statics.serve(ex, decision.route, query);
      return;
    }
    if (!caller.scopes.has("write")) throw httpError.insufficientScope();
    const wait = limiter.take(caller.keyId);
    if (wait > 0) throw httpError.rateLimited(wait);
    await proxy.patch(ex, decision.route);
  }

  function settled(): void {
    if (--inFlight === 0) drained?.();
  }

  // The unsafe request last queued on each connection, settled once it has been answered.
  const unsafeTails = new WeakMap<Socket, Promise<void>>();

  /**
   * Pipelined requests of a connection: while no unsafe one is pending, each is
   * handled at once (a cached GET in one synchronous pass). Behind an unsafe
   * one, a request waits until it is answered: a GET pipelined behind a PATCH
   * reads what that PATCH stored. An unsafe request waits for every answer
   * before it. Other connections are never held up.
   */
  function onRequest(req: IncomingMessage, res: ServerResponse, arrival: Arrival): void {
    inFlight++;
    const socket = req.socket;
    const tail = unsafeTails.get(socket);
    if (isSafe(req.method)) {
      if (tail === undefined) void handle(req, res, arrival);
      else void tail.then(() => handleUnlessGone(req, res, arrival));
      return;
    }
    const answered = earlierAnswered(req, res).then(() => handleUnlessGone(req, res, arrival));
    unsafeTails.set(socket, answered);
    void answered.then(() => {
      if (unsafeTails.get(socket) === answered) unsafeTails.delete(socket);
    });
  }

  // A request queued on a connection that closed meanwhile has no one to answer: Node drops its response too.
  function handleUnlessGone(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<void> {
    if (!req.destroyed) return handle(req, res, arrival);
    settled();
    return Promise.resolve();
  }

  async function handle(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<void> {
    const ex: Exchange = {
      req,
      res,
      started: process.hrtime.bigint(),
      baseHeaders: BASE_HEADERS,
      awaitingContinue: arrival === "checkContinue",
    };
    const { rawPath, query } = splitTarget(originFormOf(req.url ?? "/"));
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
      await dispatch(ex, auth, rawPath, query, arrival);
    } catch (error) {
      sendError(ex, error, log);
    } finally {
      settled();
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
      // Node's own refusal has an empty body; checkHost answers it with the D6 one.
      requireHostHeader: false,
      ...HEAD_LIMITS,
    },
    (req, res) => onRequest(req, res, "request"),
  );
  refuseLikeCdsnap(server);
  // Node would answer these itself: 100 Continue before any check, 417 without the D6 body.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => onRequest(req, res, "checkContinue"));
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => onRequest(req, res, "checkExpectation"));

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 8787, options.host ?? "127.0.0.1", () => resolve());
    });
  } catch (error) {
    commits.stop();
    db.close();
    throw error;
  }
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
      commits.stop();
      db.close();
      flushLog();
    },
  };
}
