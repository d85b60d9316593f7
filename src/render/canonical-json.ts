/**
 * Serializes with object keys sorted, so the same data always gives the same
 * bytes: stable hashes, ETags and deploy diffs whatever order code built it in.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

// Copies only what is out of order: rendered and re-parsed data mostly is in
// order already, and copying every object was a tenth of a build's CPU. What
// is in order is found without allocating (no key arrays), and serialized by
// JSON.stringify as it is: a serializer written here, appending strings, was
// no faster on post details and three times slower on the lists.
function sortKeys(value: unknown): unknown {
  return inOrder(value) ? value : sortedCopy(value as object);
}

/** Whether JSON.stringify already writes `value` canonically: keys in code-unit order, no undefined member, all the way down. */
function inOrder(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const member: unknown = value[i];
      if (typeof member === "object" && member !== null && !inOrder(member)) return false;
    }
    return true;
  }
  const record = value as Record<string, unknown>;
  let previous: string | undefined;
  for (const key in record) {
    const member = record[key];
    if (member === undefined || (previous !== undefined && previous > key)) return false;
    if (typeof member === "object" && member !== null && !inOrder(member)) return false;
    previous = key;
  }
  return true;
}

function sortedCopy(value: object): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  // The default sort compares strings by UTF-16 code units.
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined) continue;
    // Assigned, a "__proto__" member would set the copy's prototype and vanish from the output.
    if (key === "__proto__") Object.defineProperty(copy, key, { value: sortKeys(member), enumerable: true, writable: true, configurable: true });
    else copy[key] = sortKeys(member);
  }
  return copy;
}

/** Where a list's members are in a canonical text: `spans` gets each member's start and end. */
export interface MemberSpans {
  /** The array of the parsed value whose members are wanted. */
  of: readonly unknown[];
  /** Filled with start, end (exclusive) of each member, in UTF-16 code units of the text. */
  spans: number[];
}

const QUOTE = 34;
const BACKSLASH = 92;

/**
 * Whether `text` is exactly `canonicalJson(value)`, where `value` is what
 * `JSON.parse(text)` returned, without serializing `value` again: the text is
 * walked alongside the value, token by token, and every token compared with
 * what canonicalJson would write there. A string's characters are not compared
 * when the text spells no `\u` or `\/` escape and holds no lone surrogate
 * (then every string of it is spelled as JSON.stringify spells what it parses
 * to); else each string is.
 *
 * `true` is a proof; `false` may also mean "not proven" (an object whose keys
 * JSON.parse did not keep in code-unit order, such as integer-like keys): the
 * caller then compares with `canonicalJson(value)`.
 */
export function isCanonicalText(text: string, value: unknown, members?: MemberSpans): boolean {
  const plainStrings = text.indexOf("\\u") === -1 && text.indexOf("\\/") === -1 && text.isWellFormed();
  let at = 0;

  const literal = (spelled: string): boolean => {
    if (!text.startsWith(spelled, at)) return false;
    at += spelled.length;
    return true;
  };
  const string = (s: string): boolean => {
    if (!plainStrings) return literal(JSON.stringify(s));
    if (text.charCodeAt(at) !== QUOTE) return false;
    // The closing quote: the first one after an even number of backslashes.
    let end = at;
    for (;;) {
      end = text.indexOf('"', end + 1);
      if (end === -1) return false;
      let slashes = 0;
      while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
      if (slashes % 2 === 0) break;
    }
    at = end + 1;
    return true;
  };
  const walk = (v: unknown): boolean => {
    switch (typeof v) {
      case "string":
        return string(v);
      case "number":
        return literal(JSON.stringify(v));
      case "boolean":
        return literal(v ? "true" : "false");
      case "object": {
        if (v === null) return literal("null");
        if (Array.isArray(v)) {
          if (text.charCodeAt(at++) !== 0x5b) return false;
          const spans = members?.of === v ? members.spans : undefined;
          for (let i = 0; i < v.length; i++) {
            if (i > 0 && text.charCodeAt(at++) !== 0x2c) return false;
            const start = at;
            if (!walk(v[i])) return false;
            spans?.push(start, at);
          }
          return text.charCodeAt(at++) === 0x5d;
        }
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) return false;
        if (text.charCodeAt(at++) !== 0x7b) return false;
        const record = v as Record<string, unknown>;
        let previous: string | undefined;
        for (const key of Object.keys(record)) {
          if (previous !== undefined) {
            if (previous >= key) return false;
            if (text.charCodeAt(at++) !== 0x2c) return false;
          }
          previous = key;
          if (!literal(JSON.stringify(key)) || text.charCodeAt(at++) !== 0x3a || !walk(record[key])) return false;
        }
        return text.charCodeAt(at++) === 0x7d;
      }
      default:
        return false;
    }
  };
  if (members) members.spans.length = 0;
  return walk(value) && at === text.length;
}

/** Plain code-unit order (D2), never a locale collation. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
