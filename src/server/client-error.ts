/**
 * Requests Node's HTTP parser refuses before (or while) a handler runs: a
 * malformed request line or header, a header block over 16 KiB, a request cut
 * off by the header or request timeout. They get the D6 body like every other
 * error, with the status Node itself would pick (408, 431, else 400), and the
 * connection is closed. Nothing of the request is echoed.
 */
import { STATUS_CODES, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { NO_STORE } from "../api-http.js";
import { CdsnapError } from "../errors.js";
import { canonicalJson } from "../render/canonical-json.js";
import { httpError } from "../api-errors.js";
import { JSON_TYPE } from "./respond.js";

/** The D6 error for a request the parser refused, by Node's error code. */
export function clientErrorOf(error: NodeJS.ErrnoException): CdsnapError {
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return httpError.requestTimeout();
  if (error.code === "HPE_HEADER_OVERFLOW") return httpError.headersTooLarge();
  return httpError.badRequest();
}

export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A response already under way (its headers sent) cannot be replaced by another one.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const known = clientErrorOf(error);
  const body = Buffer.from(canonicalJson({ error: { code: known.code, message: known.message } }), "utf8");
  // An answer to HEAD has no body, even an error.
  const raw = (error as { rawPacket?: Buffer }).rawPacket;
  const head = inFlight ? inFlight.req.method === "HEAD" : raw?.subarray(0, 5).toString("latin1") === "HEAD ";
  const lines =
    `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status] ?? "Error"}\r\n` +
    `Content-Type: ${JSON_TYPE}\r\nContent-Length: ${body.length}\r\n` +
    `Cache-Control: ${NO_STORE}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n`;
  // The handler of a request cut off mid-body keeps this status for the access log.
  if (inFlight) inFlight.statusCode = known.status;
  socket.end(head ? Buffer.from(lines, "latin1") : Buffer.concat([Buffer.from(lines, "latin1"), body]), () => socket.destroy());
  // A peer that never reads must not keep the socket open either.
  setTimeout(() => socket.destroy(), 1_000).unref();
}
