/**
 * D11: the callers are browsers on the organization's website. Any origin by
 * default; an organization with `allowed_origins` gets its matching origin
 * echoed and every other origin no CORS headers at all.
 */
export const ALLOWED_METHODS = "GET, HEAD, PATCH, OPTIONS";
export const ALLOWED_HEADERS = "x-api-key, content-type, if-match, if-none-match";
const EXPOSED_HEADERS = "ETag, Retry-After, Cache-Tag";

export function corsHeaders(origin: string | undefined, allowed: readonly string[] | null): Record<string, string> {
  if (allowed === null) return { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED_HEADERS };
  if (origin !== undefined && allowed.includes(origin)) {
    return { "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED_HEADERS };
  }
  return {};
}

export function preflightHeaders(origin: string | undefined, allowed: readonly string[] | null): Record<string, string> {
  const base = corsHeaders(origin, allowed);
  if (!("Access-Control-Allow-Origin" in base)) return base;
  return {
    ...base,
    "Access-Control-Allow-Methods": ALLOWED_METHODS,
    "Access-Control-Allow-Headers": ALLOWED_HEADERS,
    "Access-Control-Max-Age": "600",
  };
}
