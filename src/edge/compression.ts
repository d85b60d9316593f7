/**
 * Compression of the edge's answers, kept behind these few functions so the
 * edge and `cdsnap serve` can agree on one scheme: a distinct strong ETag per
 * encoding (`"<sha256>-gzip"`), `Vary: Accept-Encoding`, and a 304 for any of
 * a file's ETags.
 *
 * - `platform`: the platform compresses on the way out (Cloudflare Workers
 *   does for JSON, by the client's Accept-Encoding), so the handler answers plain.
 * - `gzip`: the handler compresses itself with CompressionStream (Node, and
 *   any runtime that sends answers as they are).
 */
import { VARY } from "../api-http.js";

export type Compression = "platform" | "gzip";

export type Encoding = "gzip";

/** Smaller answers go plain: gzip's header and a round of the stream cost more than they save. */
export const MIN_COMPRESSED_BYTES = 1024;

/** Whether `Accept-Encoding` accepts `coding` (RFC 9110 §12.5.3: q=0 refuses it, `*` stands for any coding not named). */
export function accepts(header: string | null, coding: string): boolean {
  if (!header) return false;
  let star: boolean | null = null;
  for (const part of header.split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const accepted = q === undefined || Number(q.slice(2)) > 0;
    if (name.trim() === coding) return accepted;
    if (name.trim() === "*") star = accepted;
  }
  return star === true;
}

/** The encoding to answer a file of `size` bytes with, or null for plain. */
export function encodingFor(compression: Compression, acceptEncoding: string | null, size: number): Encoding | null {
  if (compression !== "gzip" || size < MIN_COMPRESSED_BYTES) return null;
  return accepts(acceptEncoding, "gzip") ? "gzip" : null;
}

/** The strong ETag of a file's bytes in an encoding. */
export function etagOf(sha256: string, encoding: Encoding | null): string {
  return encoding ? `"${sha256}-${encoding}"` : `"${sha256}"`;
}

/** Every ETag the file has, any of which an If-None-Match may name. */
export function etagsOf(sha256: string, compression: Compression): string[] {
  return compression === "gzip" ? [etagOf(sha256, null), etagOf(sha256, "gzip")] : [etagOf(sha256, null)];
}

/** Vary of every answer: a handler that picks an encoding says so on each of them. */
export function varyOf(compression: Compression): string {
  if (compression !== "gzip" || /(^|,)\s*accept-encoding\s*(,|$)/i.test(VARY)) return VARY;
  return `${VARY}, Accept-Encoding`;
}

export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
