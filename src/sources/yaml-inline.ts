/**
 * The values the fast path reads on one line (yaml-shape.ts): a single-line
 * quoted scalar, a flow sequence or mapping of such scalars, or a plain
 * scalar, followed by nothing or by a comment after a space.
 *
 * A scan, one character at a time, with no backtracking: the same language as
 * a regular expression was, but a regular expression walks a value through a
 * backtracking stack that a title of a few megabytes exhausts ("Maximum call
 * stack size exceeded" from `RegExp.test`). Every choice below is decided by
 * the next character, so the scan is linear whatever the length.
 * test/sources/yaml-inline.test.ts holds it to that regular expression.
 */

// A key: a short name, bare or quoted without escapes; short, so far from yaml's 1024-character key limit.
// Not a bare null or boolean: yaml makes `null:` the key "", js-yaml "null".
export const KEY = String.raw`(?:(?!(?:[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE):)[A-Za-z_][\w-]{0,63}|"[\w-]{1,64}"|'[\w-]{1,64}')`;
// Bounded: a key is at most 66 characters, so this regular expression never runs long.
const FLOW_KEY = new RegExp(`${KEY}:`, "y");

const SPACE = " ";
// What may not start a plain scalar: indicators, quotes, and a space.
const NOT_PLAIN_FIRST = "-?:,[]{}#&*!|>'\"%@` ";
// '-', '?' and ':' start a plain scalar only before a character that is none of these (nor the end).
const NOT_AFTER_INDICATOR = " ,[]{}#";
const FLOW_INDICATORS = ",[]{}";

function skipSpaces(text: string, at: number): number {
  while (text[at] === SPACE) at++;
  return at;
}

/** The end of the single-quoted scalar opening at `at`, or -1; `''` is a quote inside it. */
function singleQuoted(text: string, at: number): number {
  for (let from = at + 1; ; ) {
    const quote = text.indexOf("'", from);
    if (quote < 0) return -1;
    // A quote before another quote could also close the scalar, but what may follow a value never starts with one.
    if (text[quote + 1] !== "'") return quote + 1;
    from = quote + 2;
  }
}

const HEX4 = /^[0-9A-Fa-f]{4}$/;
// `\uD800`–`\uDFFF` are halves of a pair, which the two readers join differently.
const SURROGATE = /^[Dd][89A-Fa-f]/;

/** The end of the double-quoted scalar opening at `at`, or -1; escapes are `\\ \" \/ \n \t \r` and `\uXXXX` only. */
function doubleQuoted(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '"') return i + 1;
    if (c !== "\\") continue;
    const escaped = text[i + 1];
    if (escaped === "u") {
      const hex = text.slice(i + 2, i + 6);
      if (!HEX4.test(hex) || SURROGATE.test(hex)) return -1;
      i += 5;
    } else if (escaped !== undefined && '\\"/ntr'.includes(escaped)) i++;
    else return -1;
  }
  return -1;
}

/**
 * The end of the plain scalar starting at `at`, or -1. It ends before ': ', a
 * ':' at the end, ' #', and trailing spaces; inside a flow collection also
 * before a flow indicator, and before a ':' or spaces followed by one.
 */
function plain(text: string, at: number, flow: boolean): number {
  const first = text[at];
  if (first === undefined) return -1;
  if (first === "-" || first === "?" || first === ":") {
    const next = text[at + 1];
    if (next === undefined || NOT_AFTER_INDICATOR.includes(next)) return -1;
  } else if (NOT_PLAIN_FIRST.includes(first)) return -1;
  let i = at + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === SPACE) {
      const next = text[skipSpaces(text, i)];
      if (next === undefined || next === "#" || (flow && (FLOW_INDICATORS.includes(next) || next === ":"))) break;
      i = skipSpaces(text, i);
    } else if (c === ":") {
      const next = text[i + 1];
      if (next === undefined || next === SPACE || (flow && FLOW_INDICATORS.includes(next))) break;
      i++;
    } else if (flow && FLOW_INDICATORS.includes(c)) break;
    else i++;
  }
  return i;
}

/** The end of a scalar inside a flow collection starting at `at`, or -1. */
function flowItem(text: string, at: number): number {
  if (text[at] === "'") return singleQuoted(text, at);
  if (text[at] === '"') return doubleQuoted(text, at);
  return plain(text, at, true);
}

/** The end of `key: value` inside a flow mapping starting at `at`, or -1. */
function flowPair(text: string, at: number): number {
  FLOW_KEY.lastIndex = at;
  if (!FLOW_KEY.test(text)) return -1;
  const value = skipSpaces(text, FLOW_KEY.lastIndex);
  return value === FLOW_KEY.lastIndex ? -1 : flowItem(text, value);
}

/** The end of the `[…]` or `{…}` opening at `at`, or -1: items separated by commas, no trailing comma. */
function flowCollection(text: string, at: number, close: string, item: (text: string, at: number) => number): number {
  let i = skipSpaces(text, at + 1);
  if (text[i] === close) return i + 1;
  for (;;) {
    i = item(text, i);
    if (i < 0) return -1;
    i = skipSpaces(text, i);
    if (text[i] === close) return i + 1;
    if (text[i] !== ",") return -1;
    i = skipSpaces(text, i + 1);
  }
}

/** Nothing but spaces from `at` on, or spaces and then a comment. */
function endsLine(text: string, at: number): boolean {
  const i = skipSpaces(text, at);
  return i === text.length || (i > at && text[i] === "#");
}

/**
 * Whether `text`, one line after `key: ` or `- ` (no line break in it), is a
 * value the fast path reads.
 *
 * @example
 *   isInlineValue("Why static beats dynamic # a comment"); // true
 *   isInlineValue("[performance, 'cdn']");                 // true
 *   isInlineValue("Bread: a history");                     // false: yaml reports it
 */
export function isInlineValue(text: string): boolean {
  let end: number;
  switch (text[0]) {
    case "'":
      end = singleQuoted(text, 0);
      break;
    case '"':
      end = doubleQuoted(text, 0);
      break;
    case "[":
      end = flowCollection(text, 0, "]", flowItem);
      break;
    case "{":
      end = flowCollection(text, 0, "}", flowPair);
      break;
    default:
      end = plain(text, 0, false);
  }
  return end >= 0 && endsLine(text, end);
}
