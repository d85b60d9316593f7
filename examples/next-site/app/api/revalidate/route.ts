/**
 * Where scripts/on-change.sh POSTs cdsnap's `--on-change` event: each of its
 * paths and tags names reads that lib/cms.ts tagged, and every page built
 * from them, and each is expired here. Only with the shared secret, sent as
 * `Authorization: Bearer <REVALIDATE_SECRET>`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { revalidateTag } from "next/cache";

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Compared as SHA-256 digests: both are 32 bytes whatever was sent, so
 * timingSafeEqual takes them, and neither its time nor a length check tells
 * a caller how close a guess came.
 */
function authorized(header: string | null, secret: string): boolean {
  const token = /^Bearer (.+)$/.exec(header ?? "")?.[1];
  return token !== undefined && timingSafeEqual(digest(token), digest(secret));
}

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === "string");

function refused(status: number, message: string, headers?: HeadersInit): Response {
  return Response.json({ error: message }, { status, headers });
}

export async function POST(request: Request): Promise<Response> {
  const secret = process.env.REVALIDATE_SECRET;
  if (!secret) return refused(503, "REVALIDATE_SECRET is not set");
  if (!authorized(request.headers.get("authorization"), secret)) {
    return refused(401, "a POST here needs Authorization: Bearer <REVALIDATE_SECRET>", { "www-authenticate": "Bearer" });
  }
  let event: unknown;
  try {
    event = await request.json();
  } catch {
    return refused(400, "the body is not JSON");
  }
  // Members a later cdsnap adds to the event are ignored, as its documentation asks.
  const { paths, tags } = (typeof event === "object" && event !== null ? event : {}) as Record<string, unknown>;
  if (!isStringList(paths) || !isStringList(tags)) return refused(400, "the body is no cdsnap change event: paths and tags must be lists of strings");
  const names = [...new Set([...paths, ...tags])];
  // Expired, not marked stale ("max"): after the event the old answer is wrong,
  // and with "max" the next visitor would still get it while Next refetches.
  for (const name of names) revalidateTag(name, { expire: 0 });
  return Response.json({ revalidated: names.length });
}
