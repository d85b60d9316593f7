/**
 * The one place responses are written: common headers (D10 Vary, CORS), JSON
 * bodies, and every error turned into the D6 body. An unexpected error is logged
 * with its stack and answered as a plain 500 that carries neither.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { JSON_TYPE, NO_STORE } from "../api-http.js";
import { errorBody, knownError } from "../api-reads.js";
import { errorBodySchema } from "../model/api.js";
import { canonicalJson } from "../render/canonical-json.js";

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  started: bigint;
  /** Set once the key is known, for the access log. */
  keyId?: string;
  /** Headers every answer to this request carries (CORS, Vary); often an object shared by many requests. */
  baseHeaders: Readonly<Record<string, string>>;
  /** The client sent `Expect: 100-continue` and waits for `100 Continue` before sending its body. */
  awaitingContinue: boolean;
}

export function sendJson(ex: Exchange, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(canonicalJson(body), "utf8");
  ex.res.writeHead(status, {
    ...ex.baseHeaders,
    "Content-Type": JSON_TYPE,
    "Content-Length": String(bytes.length),
    "Cache-Control": NO_STORE,
    ...headers,
  });
  const payload = ex.req.method === "HEAD" ? undefined : bytes;
  if (ex.req.complete || ex.req.destroyed) {
    ex.res.end(payload);
    return;
  }
  if (payload) ex.res.write(payload);
  endAfterUpload(ex);
}

// Answering a request whose body is still arriving: the answer is written whole
// at once, but the connection stays open a moment while the rest of the upload
// is read and dropped. Closing with unread data resets the connection, and a
// client still writing would lose the answer with it. Bounded both ways.
const LINGER_MS = 1_000;
const LINGER_BYTES = 64 * 1024 * 1024;

function endAfterUpload(ex: Exchange): void {
  const { req, res } = ex;
  let dropped = 0;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    req.off("data", count);
    req.off("end", end);
    req.off("close", end);
    res.end();
  };
  const count = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_BYTES) end();
  };
  const timer = setTimeout(end, LINGER_MS);
  req.on("data", count);
  req.once("end", end);
  req.once("close", end);
  req.resume();
}

export type Logger = (line: Record<string, unknown>) => void;

export function sendError(ex: Exchange, error: unknown, log: Logger): void {
  const known = knownError(error, (unexpected) => log({ level: "error", msg: "unexpected error", error: (unexpected as Error)?.stack ?? String(unexpected) }));
  // The request's socket: a pipelined request's response has none until the
  // answers before it are out, and that is no reason to drop the connection.
  if (ex.res.headersSent || ex.req.socket.destroyed) {
    // Too late for an answer (the client went away, or a timeout already answered
    // on the socket): keep the status for the access log, then drop the connection.
    if (!ex.res.headersSent && ex.res.statusCode === 200) ex.res.statusCode = known.status;
    ex.res.destroy();
    return;
  }
  const body = errorBodySchema.parse(errorBody(known));
  // A body left unread (413, or a refusal before reading) must not be parsed as
  // the next request on this connection: close it once the answer is out.
  const close: Record<string, string> = ex.req.complete ? {} : { Connection: "close" };
  sendJson(ex, known.status, body, { ...known.headers, ...close });
}
