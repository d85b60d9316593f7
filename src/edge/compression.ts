/**
 * Compression of the edge's answers, by the same rules as `cdsnap serve`
 * (content-coding.ts): the same negotiation, `"<sha256>-gzip"` ETags, and a 304
 * for any of a file's ETags. Two modes:
 *
 * - `platform`: the platform compresses on the way out (Cloudflare Workers
 *   does for JSON, by the client's Accept-Encoding), so the handler answers plain.
 * - `gzip`: the handler compresses itself with CompressionStream (Node, and
 *   any runtime that sends answers as they are). CompressionStream has no br,
 *   so where `serve` would send br the edge sends gzip if the client takes it.
 */
import { codingOf, MIN_COMPRESSED_BYTES, type Coding } from "../content-coding.js";

export type Compression = "platform" | "gzip";

const MADE_HERE: readonly Coding[] = ["gzip"];

/** The coding to answer a file of `size` bytes with, or null for plain. */
export function encodingFor(compression: Compression, acceptEncoding: string | null, size: number): Coding | null {
  if (compression !== "gzip" || size < MIN_COMPRESSED_BYTES) return null;
  return codingOf(acceptEncoding ?? undefined, MADE_HERE);
}

export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
