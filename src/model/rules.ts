/**
 * The value rules of decisions D7 and D9, shared by the sources (build time) and
 * the PATCH bodies (request time) so that one rule never has two spellings.
 */
import { z } from "zod";
// Zod-free, so that api-paths.ts (and with it the browser client) does not pull zod in.
import { ID_PATTERN, RESERVED_ID, SLUG_PATTERN } from "./id-patterns.js";

/** Lengths in the spec count Unicode code points, not UTF-16 units. */
/** D3: an optional member that is absent or blank (empty or whitespace only) takes its default. */
export function isBlank(value: string | undefined): value is undefined {
  return value === undefined || value.trim() === "";
}

export function codePointLength(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

export { ID_PATTERN, RESERVED_ID, SLUG_PATTERN };
export const FIELD_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const idSchema = z.string().regex(ID_PATTERN, {
  message: "must be 1-128 characters of A-Z a-z 0-9 _ -, starting with a letter or digit",
});

export const itemIdSchema = idSchema.refine((id) => id !== RESERVED_ID, {
  message: `"${RESERVED_ID}" is reserved and cannot be used as an id`,
});

export const slugSchema = z
  .string()
  .max(200, { message: "must be at most 200 characters" })
  .regex(SLUG_PATTERN, { message: "must be lowercase a-z 0-9 words joined by single '-'" });

export function maxCodePoints(max: number) {
  return (value: string) => codePointLength(value) <= max;
}

// C0 except tab and newline, DEL, C1: D7's rule for text a person typed.
const FORBIDDEN_CONTROL_CHARS = "\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F";
const FORBIDDEN_CONTROL = new RegExp(`[${FORBIDDEN_CONTROL_CHARS}]`);
// Never in a link: every control character and the ASCII space.
const CONTROL_OR_SPACE_CHARS = "\\u0000-\\u0020\\u007F-\\u009F";
const ANY_CONTROL_OR_SPACE = new RegExp(`[${CONTROL_OR_SPACE_CHARS}]`);

/**
 * The rules above as JSON Schema patterns (ECMA-262), built from the same
 * character classes, so that the OpenAPI document refuses what the server does.
 */
export const SCHEMA_PATTERNS = {
  /**
   * No forbidden control character once CR LF is folded to LF (a lone CR is
   * one), and no lone surrogate; written to mean the same with or without the
   * `u` flag, since validators differ.
   */
  personText: `^(?:[^${FORBIDDEN_CONTROL_CHARS}\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]|\\r\\n)*$`,
  /** Something left after trimming: JavaScript's `\s` is exactly what `trim()` removes. */
  notBlank: "\\S",
  /**
   * An http(s) URL, surrounding whitespace allowed (it is trimmed): no control
   * character or space inside, a non-empty host, and no `@` before the path,
   * so no credentials. That the rest parses as a URL is said in words.
   */
  httpUrl: `^\\s*[hH][tT][tT][pP][sS]?://[^/?#\\\\@${CONTROL_OR_SPACE_CHARS}]+(?:[/?#\\\\][^${CONTROL_OR_SPACE_CHARS}]*)?\\s*$`,
};

export function hasForbiddenControl(value: string): boolean {
  return FORBIDDEN_CONTROL.test(value);
}

/** D7: CR LF becomes LF before the control-character rule runs. */
export function normalizeNewlines(value: string): string {
  return value.replace(/\r\n/g, "\n");
}

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/**
 * An absolute http(s) URL as a person would publish it. The WHATWG parser silently
 * strips tabs and newlines (`java\tscript:`), so any whitespace or control
 * character is refused before parsing; credentials in a public link are refused too.
 */
export function isAbsoluteHttpUrl(value: string): boolean {
  if (ANY_CONTROL_OR_SPACE.test(value)) return false;
  if (!/^https?:\/\//i.test(value)) return false;
  const url = parseUrl(value);
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) return false;
  return url.hostname !== "" && url.username === "" && url.password === "";
}

/** D9 media rule: an absolute http(s) URL, or a site path starting with one `/`. */
export function isMediaUrl(value: string): boolean {
  if (value.startsWith("/")) {
    return !value.startsWith("//") && !value.includes("\\") && !ANY_CONTROL_OR_SPACE.test(value);
  }
  return isAbsoluteHttpUrl(value);
}

export const httpUrlSchema = z
  .string()
  .refine(isAbsoluteHttpUrl, { message: "must be an absolute http: or https: URL" });

export const mediaUrlSchema = z.string().refine(isMediaUrl, {
  message: "must be an absolute http(s) URL or a path starting with '/'",
});

/** A CORS origin as browsers send it: scheme, host and optional port, nothing else. */
export function isOrigin(value: string): boolean {
  const url = parseUrl(value);
  return url !== null && url.origin !== "null" && url.origin === value;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?$/;

export interface PublishDate {
  /** The calendar date as written in the source (D3: never shifted by a zone). */
  date: string;
  /** The publish instant in ms since the epoch; date-only means 00:00 UTC. */
  instant: number;
}

function dateExists(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/** Parses `YYYY-MM-DD` or an ISO 8601 date-time (no offset = UTC); null when invalid. */
export function parsePublishDate(value: string): PublishDate | null {
  const dateOnly = DATE_ONLY.exec(value);
  if (dateOnly) {
    const [, y, m, d] = dateOnly.map(Number) as [number, number, number, number];
    if (!dateExists(y, m, d)) return null;
    return { date: value, instant: Date.UTC(y, m - 1, d) };
  }
  const dt = DATE_TIME.exec(value);
  if (!dt) return null;
  const [y, mo, d, h, mi, s] = dt.slice(1, 7).map((p) => Number(p ?? 0)) as number[];
  if (!dateExists(y!, mo!, d!) || h! > 23 || mi! > 59 || s! > 59) return null;
  const fraction = dt[7] ? Number(`0.${dt[7]}`) * 1000 : 0;
  const zone = dt[8] ?? "Z";
  let offsetMinutes = 0;
  if (zone !== "Z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const [oh, om] = zone.slice(1).split(":").map(Number) as [number, number];
    if (oh > 23 || om > 59) return null;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const instant = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) + Math.floor(fraction) - offsetMinutes * 60_000;
  return { date: value.slice(0, 10), instant };
}
