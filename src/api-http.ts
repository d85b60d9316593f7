/**
 * The HTTP facts of the API that the server states and the OpenAPI document
 * describes (D6, D10, D11): one spelling for both.
 */

/** Every file answer (200, 304): a minute fresh, then served stale while revalidated (D10). */
export const CACHE_CONTROL = "public, max-age=60, stale-while-revalidate=600";
/**
 * Every file answer to a key with the `preview` scope: it may show a draft,
 * so no shared cache may keep it (one that caches by URL would hand it to a
 * read key), and it carries no Cache-Tag.
 */
export const PREVIEW_CACHE_CONTROL = "private, no-store";
/** Every error and every PATCH answer: nothing of them is cached. */
export const NO_STORE = "no-store";
/** Answers differ by key and by origin (D10, D11). */
export const VARY = "x-api-key, Origin";
/** A file answer (200, 304) also differs by the content coding the request accepts. */
export const FILE_VARY = `${VARY}, Accept-Encoding`;
/** The methods and request headers a preflight allows (D11). */
export const ALLOWED_METHODS = "GET, HEAD, PATCH, OPTIONS";
export const ALLOWED_HEADERS = "x-api-key, content-type, if-match, if-none-match";
/**
 * How long a browser keeps a preflight's answer (seconds): Chromium's ceiling
 * (Firefox allows a day). Each new URL a page reads with its key costs one
 * OPTIONS, kept this long; what a kept preflight allows is only the sending
 * of the request, whose answer still carries its own CORS headers.
 */
export const PREFLIGHT_MAX_AGE = "7200";
/** A preflight's answer, for a cache that keeps them: as long as a browser does, purged with the organization's tag. */
export const PREFLIGHT_CACHE_CONTROL = `public, max-age=${PREFLIGHT_MAX_AGE}`;
/** The answer headers a browser script may read. */
export const EXPOSED_HEADERS = "ETag, Retry-After, Cache-Tag";
/** The largest PATCH body (D6). */
export const MAX_BODY_BYTES = 64 * 1024;
/** The most header fields a request may carry (Apache's default LimitRequestFields). */
export const MAX_HEADER_FIELDS = 100;
/**
 * The largest request head: the request line, every header field and the
 * empty line that ends them, as sent (each `: ` and CRLF counted).
 */
export const MAX_HEAD_BYTES = 16 * 1024;

/** Every answer's body is JSON. */
export const JSON_TYPE = "application/json; charset=utf-8";

/** Every answer is JSON: nosniff keeps a browser from ever reading stored text (a `<script>` in a description) as HTML. */
export const NOSNIFF = Object.freeze({ "X-Content-Type-Options": "nosniff" });

/** Real keys are short; a longer one is refused before it is hashed. */
export const MAX_KEY_LENGTH = 512;
