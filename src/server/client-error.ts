/**
 * Requests refused for their head, before any route is looked at: the ones
 * Node's HTTP parser refuses before (or while) a handler runs (a malformed
 * request line or header, a head over the parser's own limit, a request cut
 * off by the header or request timeout), and the ones whose head breaks the
 * limits the parser does not count (request-head.ts), and CONNECT, which the
 * parser hands over apart from every other request. They get the D6 body
 * like every other error, with the status Node itself would pick (408, 431,
 * else 400), no CORS and no Vary, and the connection is closed. Nothing of the
 * request is echoed. Both node:http servers (`serve`, `edge serve`) refuse
 * through here, so they refuse alike.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { ALLOWED_METHODS, JSON_TYPE, MAX_HEAD_BYTES, MAX_HEADER_FIELDS, NO_STORE, NOSNIFF } from "../api-http.js";
import { errorBodyOf } from "../api-reads.js";
import { CdsnapError } from "../errors.js";
import { httpError } from "../api-errors.js";
import { headOverLimits } from "./request-head.js";

/** The D6 error for a request the parser refused, by Node's error code. */
export function clientErrorOf(error: NodeJS.ErrnoException): CdsnapError {
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return httpError.requestTimeout();
  if (error.code === "HPE_HEADER_OVERFLOW") return httpError.headersTooLarge();
  return httpError.badRequest();
}

/** The body and headers of a refusal, whether it goes out on the bare socket or through a response. */
function refusalOf(known: CdsnapError): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(errorBodyOf(known), "utf8");
  const headers = {
    "Content-Type": JSON_TYPE,
    "Content-Length": String(body.length),
    "Cache-Control": NO_STORE,
    ...NOSNIFF,
    Connection: "close",
  };
  return { body, headers };
}

export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A response already under way (its headers sent) cannot be replaced by another one.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const known = clientErrorOf(error);
  // An answer to HEAD has no body, even an error.
  const raw = (error as { rawPacket?: Buffer }).rawPacket;
  const head = inFlight ? inFlight.req.method === "HEAD" : raw?.subarray(0, 5).toString("latin1") === "HEAD ";
  // The handler of a request cut off mid-body keeps this status for the access log.
  if (inFlight) inFlight.statusCode = known.status;
  endWith(socket, known, head);
}

/** Writes `known` as the one answer on a bare socket, then closes it. */
function endWith(socket: Duplex, known: CdsnapError, head: boolean): void {
  const { body, headers } = refusalOf(known);
  let lines = `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status] ?? "Error"}\r\n`;
  for (const [name, value] of Object.entries({ ...headers, ...known.headers })) lines += `${name}: ${value}\r\n`;
  lines += "\r\n";
  socket.end(head ? Buffer.from(lines, "latin1") : Buffer.concat([Buffer.from(lines, "latin1"), body]), () => socket.destroy());
  // A peer that never reads must not keep the socket open either.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/**
 * CONNECT asks for a tunnel, and node:http hands it to a `connect` listener
 * instead of the request handler (with none, it closes the connection
 * unanswered). The API takes no such method: 405 with the D6 body, as any
 * other method it does not take, and the connection closed, since what
 * follows on it would be the tunnel's bytes.
 */
function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  endWith(socket, httpError.methodNotAllowed(ALLOWED_METHODS), false);
}

/**
 * Refuses a request whose head breaks the limits the parser leaves to the
 * server (more than {@link MAX_HEADER_FIELDS} fields, more than
 * {@link MAX_HEAD_BYTES} with separators counted) as the parser refuses one
 * over its own: the same 431, the connection closed. Through the request's
 * response, so a pipelined request is answered in its turn. True when it
 * refused; the handler then has nothing left to do.
 */
export function refuseOversizedHead(req: IncomingMessage, res: ServerResponse): boolean {
  if (!headOverLimits(req)) return false;
  const known = httpError.headersTooLarge();
  const { body, headers } = refusalOf(known);
  res.writeHead(known.status, headers);
  res.end(req.method === "HEAD" ? undefined : body);
  return true;
}

/** The node:http options of a cdsnap server: its parser's own limit on a head, whatever `--max-http-header-size` says. */
export const HEAD_LIMITS = Object.freeze({ maxHeaderSize: MAX_HEAD_BYTES });

/**
 * Makes `server` (created with {@link HEAD_LIMITS}) refuse as cdsnap does:
 * parser refusals with the D6 body, and one header field kept beyond the
 * limit, so that a request with too many is seen and refused by
 * {@link refuseOversizedHead}. Node's `maxHeadersCount` alone would silently
 * drop the fields past it and serve the request.
 */
export function refuseLikeCdsnap(server: Server): void {
  server.maxHeadersCount = MAX_HEADER_FIELDS + 1;
  server.on("clientError", answerClientError);
  server.on("connect", refuseConnect);
}
