/**
 * What Node's parser leaves to the server in a request's head: a target in
 * absolute form, header fields sent more than once, which `req.headers`
 * joins or silently drops, and the limits on a head's size.
 */
import type { IncomingMessage } from "node:http";
import { MAX_HEAD_BYTES, MAX_HEADER_FIELDS } from "../api-http.js";

const SCHEME_AND_AUTHORITY = /^https?:\/\/[^/?#]*/i;

/**
 * The origin form of a request target: `http://host:port/a?b` is `/a?b`
 * (RFC 9112 §3.2.2: what a client talking to a proxy sends, which a server
 * must accept). The authority stands for Host, and this server answers the
 * same whatever Host it is asked for.
 */
export function originFormOf(target: string): string {
  // Nearly every target is already in origin form: it goes through untouched.
  if (target.charCodeAt(0) === 0x2f) return target;
  const prefix = SCHEME_AND_AUTHORITY.exec(target);
  if (!prefix) return target;
  const rest = target.slice(prefix[0].length);
  return rest.charCodeAt(0) === 0x2f ? rest : `/${rest}`;
}

/**
 * The client's address as the proxy in front of the server saw it: the last
 * entry of the header `name` (lower case). In `X-Forwarded-For` each proxy
 * appends the address it received from, so the last entry is the one the
 * nearest proxy vouches for; the ones before it are whatever the client wrote.
 * Undefined when the header is absent or empty.
 */
export function forwardedAddressOf(rawHeaders: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const field = rawHeaders[i]!;
    if (field.length === name.length && field.toLowerCase() === name) value = rawHeaders[i + 1];
  }
  const last = value?.slice(value.lastIndexOf(",") + 1).trim();
  return last ? last : undefined;
}

/** How many times the header `name` (lower case) was sent. */
export function countHeader(rawHeaders: readonly string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const field = rawHeaders[i]!;
    if (field.length === name.length && field.toLowerCase() === name) count++;
  }
  return count;
}

// A head's bytes besides the method, target, version and fields: the request line's two
// spaces and "HTTP/" (7), its CRLF and the empty line's CRLF (4).
const REQUEST_LINE_AND_END = 11;

/**
 * Whether a request's head breaks the limits of api-http.ts: more than
 * {@link MAX_HEADER_FIELDS} fields, or more than {@link MAX_HEAD_BYTES} in all,
 * each field counted as `name: value` and CRLF. Node's own `maxHeaderSize`
 * counts the target, names and values without a separator, so two thousand
 * tiny fields pass it; counting the separators closes that. Node hands the
 * head over as Latin-1 text: a string's length is its byte count. Whitespace
 * padding a value is not part of it (RFC 9110 §5.5): the parser drops it as it
 * comes, so it is not counted.
 */
export function headOverLimits(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  // The server keeps one field more than allowed (client-error.ts), so an excess shows here.
  if (raw.length > 2 * MAX_HEADER_FIELDS) return true;
  let bytes = REQUEST_LINE_AND_END + (req.method ?? "").length + (req.url ?? "").length + req.httpVersion.length;
  // Every name is followed by ": ", every value by CRLF.
  for (const part of raw) bytes += part.length + 2;
  return bytes > MAX_HEAD_BYTES;
}
