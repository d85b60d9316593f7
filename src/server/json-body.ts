/**
 * The one reader of JSON request bodies (D6): strict UTF-8, then JSON.parse,
 * then a refusal of duplicate member names. JSON.parse silently keeps the last
 * of two equal names, while another JSON reader on the way (a proxy, a WAF, a
 * log pipeline) may keep the first: a body that says two things at once is
 * refused as malformed rather than guessed at. The duplicate scan is iterative,
 * so no nesting depth can exhaust the stack.
 */
import { httpError } from "../api-errors.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

interface Frame {
  /** Member names seen so far; null for an array. */
  names: Set<string> | null;
  /** The current member name (object) or element index (array), for the path. */
  at: string | number;
}

/**
 * The first member name an object of `text` (valid JSON) repeats, with the path
 * of that object (`businessOffers.0`, or `""` for the top level); null when none.
 *
 * @example findDuplicateName('{"a":1,"b":{"c":2,"c":3}}') // { name: "c", path: "b" }
 */
export function findDuplicateName(text: string): { name: string; path: string } | null {
  const stack: Frame[] = [];
  let expectName = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string token: find its closing quote, stepping over escape pairs.
      let j = i + 1;
      let escaped = false;
      for (let d = text.charCodeAt(j); d !== 0x22; d = text.charCodeAt(j)) {
        if (d === 0x5c) {
          escaped = true;
          j += 2;
        } else j++;
      }
      const top = stack[stack.length - 1];
      if (top?.names && expectName) {
        // Escapes spell the same name differently ("a" and "\u0061"): compare decoded names.
        const name = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
        if (top.names.has(name)) return { name, path: stack.slice(0, -1).map((f) => String(f.at)).join(".") };
        top.names.add(name);
        top.at = name;
        expectName = false;
      }
      i = j;
    } else if (c === 0x7b) {
      stack.push({ names: new Set(), at: "" });
      expectName = true;
    } else if (c === 0x5b) {
      stack.push({ names: null, at: 0 });
      expectName = false;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      expectName = false;
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1];
      if (top?.names) expectName = true;
      else if (top) top.at = (top.at as number) + 1;
    }
  }
  return null;
}

function shorten(name: string): string {
  const chars = [...name];
  return chars.length > 40 ? `${chars.slice(0, 40).join("")}…` : name;
}

/** Decodes and parses a request body; any failure is `400 malformed_json`. */
export function parseJsonBody(bytes: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (error) {
    // The decoder is fatal: a byte sequence that is not UTF-8 is a TypeError.
    if (!(error instanceof TypeError)) throw error;
    throw httpError.malformedJson("it is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8's parser is iterative; should an engine still give up on depth (RangeError), that is the body's fault too.
    throw httpError.malformedJson(error instanceof SyntaxError ? error.message : "it is nested too deeply");
  }
  const duplicate = findDuplicateName(text);
  if (duplicate) {
    const where = duplicate.path === "" ? "the top-level object" : `the object at ${duplicate.path}`;
    throw httpError.malformedJson(`${where} has the member ${JSON.stringify(shorten(duplicate.name))} twice`);
  }
  return value;
}
