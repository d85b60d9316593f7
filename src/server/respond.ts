/**
 * The one place responses are written: common headers (D10 Vary, CORS), JSON
 * bodies, and every error turned into the D6 body. An unexpected error is logged
 * with its stack and answered as a plain 500 that carries neither.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { CdsnapError } from "../errors.js";
import { errorBodySchema } from "../model/api.js";
import { canonicalJson } from "../render/canonical-json.js";
import { httpError } from "./http-errors.js";

export const JSON_TYPE = "application/json; charset=utf-8";

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  started: bigint;
  /** Set once the key is known, for the access log. */
  keyId?: string;
  /** Headers every answer to this request carries (CORS, Vary). */
  baseHeaders: Record<string, string>;
}

export function sendJson(ex: Exchange, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(canonicalJson(body), "utf8");
  ex.res.writeHead(status, {
    ...ex.baseHeaders,
    "Content-Type": JSON_TYPE,
    "Content-Length": String(bytes.length),
    "Cache-Control": "no-store",
    ...headers,
  });
  ex.res.end(ex.req.method === "HEAD" ? undefined : bytes);
}

export type Logger = (line: Record<string, unknown>) => void;

export function sendError(ex: Exchange, error: unknown, log: Logger): void {
  let known: CdsnapError;
  if (error instanceof CdsnapError && error.status < 500) {
    known = error;
  } else {
    log({ level: "error", msg: "unexpected error", error: (error as Error)?.stack ?? String(error) });
    known = httpError.internal();
  }
  if (ex.res.headersSent) {
    ex.res.destroy();
    return;
  }
  const body = errorBodySchema.parse({
    error: { code: known.code, message: known.message, ...(known.details ? { details: known.details } : {}) },
  });
  // A body left unread (413, or a refusal before reading) must not be parsed as
  // the next request on this connection: close it once the answer is out.
  const close: Record<string, string> = ex.req.complete ? {} : { Connection: "close" };
  sendJson(ex, known.status, body, { ...known.headers, ...close });
}
