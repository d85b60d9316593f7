/**
 * One request from its head to its answer: the head's checks, the CORS
 * headers, a preflight's answer, the caller, then the file route or the write
 * proxy; any error becomes the D6 answer, and the access log gets its line.
 */
import type { IncomingMessage } from "node:http";
import { NOSNIFF, VARY } from "../api-http.js";
import { corsHeaders, decideRead, preflightAnswer, splitTarget } from "../api-reads.js";
import { parseApiPath, type Route } from "../api-paths.js";
import { httpError } from "../api-errors.js";
import { logWhenClosed } from "./access-log.js";
import type { AuthCache, Caller } from "./auth.js";
import { refuseOversizedHead } from "./client-error.js";
import type { Arrival, InFlight } from "./http-server.js";
import type { Handle } from "./pipelining.js";
import type { RateLimiter } from "./rate-limit.js";
import { countHeader, originFormOf } from "./request-head.js";
import { sendError, type Exchange, type Logger } from "./respond.js";
import type { StaticRoute } from "./static-route.js";
import type { WriteProxy } from "./write-proxy.js";

/** What a request goes through once its head has passed. */
export interface ServerParts {
  auth: AuthCache;
  /** The caller of a request, or the D5 refusal (caller-check.ts). */
  authenticate(req: IncomingMessage): Caller;
  statics: StaticRoute;
  proxy: WriteProxy;
  /** PATCH requests a minute per key (D6). */
  writeLimiter: RateLimiter;
}

const BASE_HEADERS = Object.freeze({ Vary: VARY, ...NOSNIFF });
// The headers of most answers, built once: spreading them together per request was a measurable cost.
const ANY_ORIGIN_HEADERS = Object.freeze({ ...corsHeaders(undefined, null), ...BASE_HEADERS });

const ONE_HOST = "the request must carry exactly one Host header (HTTP/1.0 at most one)";

/** RFC 9112 §3.2: Node's own check of it answers without the D6 body, so the server makes it. */
function checkHost(req: IncomingMessage): void {
  const hosts = countHeader(req.rawHeaders, "host");
  if (hosts > 1 || (hosts === 0 && req.httpVersionMajor === 1 && req.httpVersionMinor === 1)) throw httpError.badRequest(ONE_HOST);
}

async function dispatch(parts: ServerParts, ex: Exchange, rawPath: string, query: string, arrival: Arrival): Promise<void> {
  const { req, res } = ex;
  if (refuseOversizedHead(req, res)) return;
  checkHost(req);
  if (arrival === "checkExpectation") throw httpError.expectationFailed();
  const route: Route | null = parseApiPath(rawPath);
  const origin = req.headers.origin;
  const allowed = route ? parts.auth.allowedOrigins(route.orgId) : null;
  ex.baseHeaders = allowed === null ? ANY_ORIGIN_HEADERS : { ...corsHeaders(origin, allowed), ...BASE_HEADERS };

  if (req.method === "OPTIONS") {
    res.writeHead(204, preflightAnswer(route, origin, allowed));
    res.end();
    return;
  }

  const caller = parts.authenticate(req);
  ex.keyId = caller.keyId;
  const decision = decideRead(req.method, route, caller);
  if (decision.kind === "file") {
    await parts.statics.serve(ex, decision.route, query, caller.scopes.has("preview"));
    return;
  }
  if (!caller.scopes.has("write")) throw httpError.insufficientScope();
  const wait = parts.writeLimiter.take(caller.keyId);
  if (wait > 0) throw httpError.rateLimited(wait);
  await parts.proxy.patch(ex, decision.route);
}

export function createRequestHandler(parts: ServerParts, requests: InFlight, log: Logger): Handle {
  return async function handle(req, res, arrival) {
    const ex: Exchange = {
      req,
      res,
      started: process.hrtime.bigint(),
      baseHeaders: BASE_HEADERS,
      awaitingContinue: arrival === "checkContinue",
    };
    const { rawPath, query } = splitTarget(originFormOf(req.url ?? "/"));
    logWhenClosed(ex, rawPath, log);
    try {
      await dispatch(parts, ex, rawPath, query, arrival);
    } catch (error) {
      sendError(ex, error, log);
    } finally {
      requests.settle();
    }
  };
}
