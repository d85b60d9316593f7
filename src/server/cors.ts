/**
 * D11: the callers are browsers on the organization's website. Any origin by
 * default; an organization with `allowed_origins` gets its matching origin
 * echoed and every other origin no CORS headers at all.
 */
import { ALLOWED_HEADERS, ALLOWED_METHODS, EXPOSED_HEADERS } from "../api-http.js";

const ANY_ORIGIN = Object.freeze({ "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED_HEADERS });
const NO_CORS = Object.freeze({});

/** Shared, frozen objects except for an echoed origin: the common answers allocate nothing. */
export function corsHeaders(origin: string | undefined, allowed: readonly string[] | null): Readonly<Record<string, string>> {
  if (allowed === null) return ANY_ORIGIN;
  if (origin !== undefined && allowed.includes(origin)) {
    return { "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED_HEADERS };
  }
  return NO_CORS;
}

export function preflightHeaders(origin: string | undefined, allowed: readonly string[] | null): Readonly<Record<string, string>> {
  const base = corsHeaders(origin, allowed);
  if (!("Access-Control-Allow-Origin" in base)) return base;
  return {
    ...base,
    "Access-Control-Allow-Methods": ALLOWED_METHODS,
    "Access-Control-Allow-Headers": ALLOWED_HEADERS,
    "Access-Control-Max-Age": "600",
  };
}
