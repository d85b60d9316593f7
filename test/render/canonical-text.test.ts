/**
 * isCanonicalText: whether a text is exactly canonicalJson of what it parses
 * to, proven without serializing again. `true` must never be wrong (the audit
 * then skips the search of the canonical spelling for secrets, and hashes the
 * bytes as they are); `false` is allowed to mean "not proven".
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dataOf } from "../fixtures/json-data.js";
import { canonicalJson, isCanonicalText, type MemberSpans } from "../../src/render/canonical-json.js";

/** Whether every object's keys, as JSON.parse left them, are in code-unit order (integer-like keys may not be). */
function keysInOrder(value: unknown): boolean {
  if (value === null || typeof value !== "object") return true;
  const keys = Array.isArray(value) ? [] : Object.keys(value);
  return keys.every((k, i) => i === 0 || keys[i - 1]! < k) && Object.values(value).every(keysInOrder);
}

const oddKey = fc.constantFrom("__proto__", "constructor", "1", "9", "10", "01", "", "é", "Z", 'a"b', "\\", "/", "\u0000", "\u2028", "\ud800", "\ud83d\ude00");
const key = fc.oneof(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3, unit: "binary" }), oddKey);
const scalar = fc.oneof(
  fc.string({ maxLength: 8, unit: "binary" }),
  fc.string({ maxLength: 8 }),
  fc.constantFrom("", '"', "\\", "\\u0073", "\\\\u", "/", "</a>", "\b\f\n\r\t", "\u0000\u001f\u007f", "\ud800", "\udc00a", "\ud83d\ude00", "\u2028"),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, 1, -1, 1e21, 1e-7, 1.5, 100, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53),
  fc.boolean(),
  fc.constant(null),
);
/** JSON data (no undefined: it is what JSON.parse gives), objects built member by member. */
const jsonData = dataOf(scalar, key);

/**
 * A JSON printer that spells the same data the ways JSON allows and canonical
 * JSON does not, each now and then: whitespace, keys out of order, a key
 * written twice, `\u` and `\/` escapes (upper- or lowercase hex), other
 * spellings of numbers.
 */
interface Choices {
  /** A number in [0, 1) per decision; a decision deviates when it is below `rate`. */
  next(): number;
  rate: number;
}
function print(value: unknown, c: Choices): string {
  const odd = () => c.next() < c.rate;
  const space = () => (odd() ? [" ", "\n", "\t", "\r\n  "][Math.floor(c.next() * 4)]! : "");
  const str = (s: string): string => {
    let out = "";
    for (const ch of JSON.stringify(s).slice(1, -1).match(/\\u[0-9a-f]{4}|\\.|[\s\S]/g) ?? []) {
      if (!odd()) out += ch;
      else if (ch === "/") out += "\\/";
      else if (ch.length === 1 || ch.startsWith("\\u")) {
        const unit = ch.length === 1 ? ch.charCodeAt(0) : parseInt(ch.slice(2), 16);
        const hex = unit.toString(16).padStart(4, "0");
        out += `\\u${c.next() < 0.5 ? hex : hex.toUpperCase()}`;
      } else {
        // \n, \", ...: the same character as a \u escape.
        const unit = (JSON.parse(`"${ch}"`) as string).charCodeAt(0);
        out += `\\u${unit.toString(16).padStart(4, "0")}`;
      }
    }
    return `"${out}"`;
  };
  const num = (n: number): string => {
    const plain = JSON.stringify(n);
    if (!odd()) return plain;
    const forms = [n.toExponential(), n.toExponential().toUpperCase(), Number.isInteger(n) && Math.abs(n) < 1e21 ? `${plain}.0` : plain, n === 0 ? "-0" : plain, /e/.test(plain) ? plain : `${plain}e0`];
    return forms[Math.floor(c.next() * forms.length)]!;
  };
  const walk = (v: unknown): string => {
    if (typeof v === "string") return str(v);
    if (typeof v === "number") return num(v);
    if (v === null || typeof v !== "object") return JSON.stringify(v);
    if (Array.isArray(v)) return `[${space()}${v.map((m) => walk(m) + space()).join(`,${space()}`)}]`;
    const keys = Object.keys(v).sort();
    if (odd()) keys.reverse();
    const members = keys.map((k) => `${str(k)}${space()}:${space()}${walk((v as Record<string, unknown>)[k])}`);
    if (keys.length > 0 && odd()) {
      // A key twice: JSON.parse keeps the last value, at the first one's place.
      const k = keys[Math.floor(c.next() * keys.length)]!;
      members.unshift(`${str(k)}:${odd() ? "0" : walk((v as Record<string, unknown>)[k])}`);
    }
    return `{${space()}${members.join(`,${space()}`)}${space()}}`;
  };
  return space() + walk(value) + space();
}

const choices = fc.tuple(fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 64 }), fc.constantFrom(0, 0.02, 0.1, 0.5)).map(([draws, rate]) => {
  let i = 0;
  return { next: () => draws[i++ % draws.length]!, rate } satisfies Choices;
});

describe("isCanonicalText", () => {
  it("proves the canonical text of any data canonical, unless JSON.parse reorders its keys", () => {
    fc.assert(
      fc.property(jsonData, (value) => {
        const text = canonicalJson(value);
        const parsed = JSON.parse(text) as unknown;
        expect(isCanonicalText(text, parsed)).toBe(keysInOrder(parsed));
      }),
      { numRuns: 3000 },
    );
  });

  it("never calls a text canonical that is not, however it is spelled", () => {
    fc.assert(
      fc.property(jsonData, choices, (value, c) => {
        const text = print(value, c);
        const parsed = JSON.parse(text) as unknown;
        const canonical = text === canonicalJson(parsed);
        const proven = isCanonicalText(text, parsed);
        if (proven) expect(canonical).toBe(true);
        if (canonical && keysInOrder(parsed)) expect(proven).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it("refuses each way of spelling data otherwise", () => {
    const cases: [string, string][] = [
      ['{"a":"sk"}', '{"a":"\\u0073k"}'],
      ['{"a":"s\\"k"}', '{"a":"s\\u0022k"}'],
      ['{"a":"\\n"}', '{"a":"\\u000a"}'],
      ['{"a":"\\u001f"}', '{"a":"\\u001F"}'],
      ['{"a":"\\ud800"}', '{"a":"\\uD800"}'],
      ['{"a":"\ud83d\ude00"}', '{"a":"\\ud83d\\ude00"}'],
      ['{"a":"/"}', '{"a":"\\/"}'],
      ['{"a":1}', '{"a": 1}'],
      ['{"a":1}', ' {"a":1}'],
      ['{"a":1}', '{"a":1}\n'],
      ['{"a":1}', '{"a":1.0}'],
      ['{"a":100}', '{"a":1e2}'],
      ['{"a":0}', '{"a":-0}'],
      ['{"a":1}', '{"a":1,"a":1}'],
      ['{"a":1}', '{"a":0,"a":1}'],
      ['{"a":1,"b":2}', '{"b":2,"a":1}'],
      ['{"1":1,"b":1}', '{"b":1,"1":1}'],
      ['[1,2]', "[1, 2]"],
      ['"\\\\u0073"', '"\\\\\\u0075\\u0030073"'],
      ['"\\ud800"', '"\ud800"'],
    ];
    for (const [canonical, other] of cases) {
      expect(canonicalJson(JSON.parse(other))).toBe(canonical);
      expect(canonicalJson(JSON.parse(canonical))).toBe(canonical);
      expect(isCanonicalText(canonical, JSON.parse(canonical)), canonical).toBe(true);
      expect(isCanonicalText(other, JSON.parse(other)), other).toBe(false);
    }
  });

  it("gives where each member of the list is, which is that member's canonical JSON", () => {
    fc.assert(
      fc.property(fc.array(jsonData, { maxLength: 6 }), (items) => {
        const text = canonicalJson({ items });
        const parsed = JSON.parse(text) as { items: unknown[] };
        const members: MemberSpans = { of: parsed.items, spans: [] };
        if (!isCanonicalText(text, parsed, members)) return;
        expect(members.spans).toHaveLength(2 * parsed.items.length);
        parsed.items.forEach((item, i) => {
          expect(text.slice(members.spans[2 * i], members.spans[2 * i + 1])).toBe(canonicalJson(item));
        });
      }),
      { numRuns: 1000 },
    );
  });

  it("does not prove what JSON.parse did not give: undefined members, or other objects than plain ones", () => {
    expect(isCanonicalText('{"a":1}', { a: 1, b: undefined })).toBe(false);
    expect(isCanonicalText("[null]", [undefined])).toBe(false);
    expect(isCanonicalText("{}", new Map())).toBe(false);
    expect(isCanonicalText('"2024-01-02T00:00:00.000Z"', new Date(Date.UTC(2024, 0, 2)))).toBe(false);
  });
});
