import type { IncomingMessage } from "node:http";
import { MAX_BODY_BYTES } from "../api-http.js";
import { httpError } from "../api-errors.js";


/**
 * Reads a request body with a hard cap: a declared length over the cap is
 * refused before a byte is read, and a body that grows past it (chunked) is cut
 * off as soon as it does, so memory stays bounded whatever a client sends. The
 * rest of a refused body is left flowing, to be dropped while the answer goes
 * out (respond.ts). A body that stops arriving (the client went away, or the
 * request timeout closed the connection) is the client's failure, never
 * logged as the server's.
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    checkDeclaredLength(req, limit);
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onAbort);
      req.off("close", onAbort);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      stop();
      chunks.length = 0;
      reject(httpError.payloadTooLarge(limit));
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onAbort = () => {
      stop();
      reject(httpError.requestAborted());
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onAbort);
    req.on("close", onAbort);
  });
}

/** A declared length over the cap is refused on the headers alone (before `100 Continue`, too). */
export function checkDeclaredLength(req: IncomingMessage, limit = MAX_BODY_BYTES): void {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw httpError.payloadTooLarge(limit);
}
