/**
 * Which content coding a file answer goes out in, by the request's
 * `Accept-Encoding` (RFC 9110 §12.5.3), and the ETag of each coding. Plain
 * string work with no Node module, so that any server of the tree (an edge
 * handler as well as `serve`) answers the same request with the same coding
 * and the same ETag.
 */

/** The codings answers are compressed with, best first: on equal q-values the first wins. */
export const CODINGS = ["br", "gzip"] as const;
export type Coding = (typeof CODINGS)[number];

/**
 * Smaller answers always go out as they are: a few hundred bytes save little,
 * and deciding by length alone lets a 304 name its ETag without compressing.
 */
export const MIN_COMPRESSED_BYTES = 1024;

interface Weights {
  byName: Map<string, number>;
  /** The weight of `*`, when listed. */
  any: number | undefined;
}

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

function parseWeights(header: string): Weights {
  const byName = new Map<string, number>();
  let any: number | undefined;
  for (const element of header.split(",")) {
    const [rawName, ...params] = element.split(";");
    const name = rawName!.trim().toLowerCase();
    if (name === "") continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split("=").map((s) => s.trim());
      if (key?.toLowerCase() !== "q") continue;
      // A weight that is not a qvalue makes the element meaningless: it is ignored rather than guessed at.
      q = value !== undefined && QVALUE.test(value) ? Number(value) : NaN;
    }
    if (Number.isNaN(q)) continue;
    // RFC 9110 §8.4.1.3: x-gzip is gzip. The first mention of a name counts.
    const coding = name === "x-gzip" ? "gzip" : name;
    if (coding === "*") any ??= q;
    else if (!byName.has(coding)) byName.set(coding, q);
  }
  return { byName, any };
}

function choose(header: string | undefined, available: readonly Coding[]): Coding | null {
  // No Accept-Encoding: RFC 9110 lets the server pick any coding, but a client that
  // says nothing (curl, a health check) is best served the plain document.
  if (header === undefined) return null;
  const { byName, any } = parseWeights(header);
  // Unlisted codings take the weight of `*`, and are refused without it. Identity
  // is acceptable unless refused by name or by `*;q=0`; unlisted, it weighs no more
  // than the least wanted coding listed, so `br;q=0.8` asks for br, as meant.
  let best: Coding | null = null;
  let bestQ = byName.get("identity") ?? any ?? Math.min(1, ...[...byName.values()].filter((q) => q > 0));
  for (const coding of available) {
    const q = byName.get(coding) ?? any ?? 0;
    if (q > 0 && (q > bestQ || (q === bestQ && best === null))) {
      best = coding;
      bestQ = q;
    }
  }
  // Nothing acceptable at all (`identity;q=0` and no known coding): RFC 9110 §12.1 lets
  // the server disregard the header rather than answer 406, so the plain document goes.
  return best;
}

// Clients send a handful of distinct values; each is parsed once.
const chosen = new Map<string | undefined, Coding | null>();

/**
 * The coding to answer with, or null for the document as it is.
 *
 * @example
 *   codingOf("gzip, deflate, br");   // "br"
 *   codingOf("br;q=0.5, gzip");      // "gzip"
 *   codingOf("br;q=0, gzip;q=0");    // null
 *   codingOf("br, gzip", ["gzip"]);  // "gzip": a server that cannot make br
 */
export function codingOf(acceptEncoding: string | undefined, available: readonly Coding[] = CODINGS): Coding | null {
  const key = available === CODINGS ? acceptEncoding : `${available.join(",")}\u0000${acceptEncoding}`;
  let coding = chosen.get(key);
  if (coding === undefined) {
    coding = choose(acceptEncoding, available);
    if (chosen.size >= 256) chosen.clear();
    chosen.set(key, coding);
  }
  return coding;
}

/** The strong ETag of a coding of a file, from the file's own: `"<sha>"` → `"<sha>-br"`. */
export function codedEtag(etag: string, coding: Coding | null): string {
  return coding === null ? etag : `${etag.slice(0, -1)}-${coding}"`;
}

const CODED_SUFFIX = new RegExp(`-(?:${CODINGS.join("|")})"$`);

/**
 * The file's own ETag behind any coding's: every coding of a file is the same
 * version, so each of its ETags validates (If-None-Match) or matches (If-Match) it.
 * A weak tag stays weak: stripping `W/` is the caller's choice of comparison.
 *
 * @example
 *   fileEtagOf('"ab12-gzip"');   // '"ab12"'
 */
export function fileEtagOf(tag: string): string {
  return tag.trim().replace(CODED_SUFFIX, '"');
}
