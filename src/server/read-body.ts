import type { IncomingMessage } from "node:http";
import { httpError } from "./http-errors.js";

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Reads a request body with a hard cap: a declared length over the cap is
 * refused before a byte is read, and a body that grows past it (chunked) is cut
 * off as soon as it does, so memory stays bounded whatever a client sends.
 */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw httpError.payloadTooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw httpError.payloadTooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
