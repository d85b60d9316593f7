import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dataOf, define } from "../fixtures/json-data.js";
import { canonicalJson } from "../../src/render/canonical-json.js";

/** The definition: every object rebuilt with its keys in code-unit order, undefined members dropped. */
function reference(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) {
        const member = (v as Record<string, unknown>)[key];
        if (member !== undefined) define(out, key, sort(member));
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(sort(value));
}

/**
 * canonicalJson as it was before the in-order check (sortKeys, then
 * JSON.stringify), kept here as the oracle the faster one must equal.
 */
function previousCanonicalJson(value: unknown): string {
  const isSorted = (keys: readonly string[]) => keys.every((key, i) => i === 0 || keys[i - 1]! <= key);
  const sortKeys = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const member = sortKeys(value[i]);
        if (copy) copy.push(member);
        else if (member !== value[i]) copy = [...value.slice(0, i), member];
      }
      return copy ?? value;
    }
    if (value !== null && typeof value === "object") {
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      let same = isSorted(keys);
      const members = keys.map((key) => {
        const member = record[key];
        if (member === undefined) {
          same = false;
          return member;
        }
        const sorted = sortKeys(member);
        if (sorted !== member) same = false;
        return sorted;
      });
      if (same) return value;
      const sorted: Record<string, unknown> = {};
      const order = keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
      for (const i of order) if (members[i] !== undefined) sorted[keys[i]!] = members[i];
      return sorted;
    }
    return value;
  };
  return JSON.stringify(sortKeys(value));
}

/** Whether any object in `value` has an own "__proto__" member: the one case the previous version got wrong. */
function holdsProtoKey(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  if (!Array.isArray(value) && Object.hasOwn(value, "__proto__")) return true;
  return Object.values(value).some(holdsProtoKey);
}

/** The same data with every object's keys in another order. */
function shuffled(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffled(v, seed + 1));
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    const rotated = entries.slice(seed % (entries.length || 1)).concat(entries.slice(0, seed % (entries.length || 1))).reverse();
    const out: Record<string, unknown> = {};
    for (const [k, v] of rotated) define(out, k, shuffled(v, seed + 1));
    return out;
  }
  return value;
}

const withUndefined = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 1 }),
    fc.constant(undefined),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie("value"), { maxKeys: 5 }),
  ),
})).value;

/** Keys that sort, enumerate or assign unlike plain words. */
const oddKey = fc.constantFrom(
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "0",
  "1",
  "9",
  "10",
  "01",
  "-1",
  "1.5",
  "4294967294",
  "4294967295",
  "",
  "é",
  "Z",
  "a\"b",
  "back\\slash",
  "\u0000",
  "\u2028",
  "\ud800",
  "\udc00x",
  "\ud83d\ude00",
  "\uffff",
);
const key = fc.oneof(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3, unit: "binary" }), oddKey);
const scalar = fc.oneof(
  fc.string({ maxLength: 6, unit: "binary" }),
  fc.string({ maxLength: 6 }),
  fc.constantFrom("", "\u0000\u001f\u007f", "\b\f\n\r\t\"\\/", "\ud800", "a\udfff", "\ud83d\ude00", "\u2028\u2029", "</script>"),
  fc.double(),
  fc.integer(),
  fc.constantFrom(-0, 0, 1e21, 1e-7, 123e-20, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity, 2 ** 53),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);
/** JSON-ish data: objects built member by member (so "__proto__" is an own key), arrays with undefined in them. */
const anyData = dataOf(scalar, key);

describe("canonical JSON", () => {
  it("equals the definition on any data, in order or not, with undefined members", () => {
    fc.assert(
      fc.property(withUndefined, (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 2000 },
    );
  });

  it("gives exactly the previous implementation's bytes, odd keys, numbers and strings included", () => {
    fc.assert(
      fc.property(anyData, (value) => {
        const expected = holdsProtoKey(value) ? reference(value) : previousCanonicalJson(value);
        expect(canonicalJson(value)).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });

  it("keeps a member named __proto__ whatever the order (the previous implementation dropped it when it sorted)", () => {
    const inOrder: Record<string, unknown> = {};
    define(inOrder, "__proto__", { y: 1 });
    define(inOrder, "b", 2);
    const reversed: Record<string, unknown> = { b: 2 };
    define(reversed, "__proto__", { y: 1 });
    expect(canonicalJson(inOrder)).toBe('{"__proto__":{"y":1},"b":2}');
    expect(canonicalJson(reversed)).toBe('{"__proto__":{"y":1},"b":2}');
    expect(previousCanonicalJson(reversed)).toBe('{"b":2}');
  });

  it("writes integer-like keys where JSON.stringify puts them, as before", () => {
    const value = { b: 1, "10": 2, "9": 3, "01": 4, a: undefined };
    expect(canonicalJson(value)).toBe('{"9":3,"10":2,"01":4,"b":1}');
    expect(canonicalJson(value)).toBe(previousCanonicalJson(value));
  });

  it("serializes numbers, strings and holes as JSON.stringify does", () => {
    const value = [-0, 1e21, NaN, Infinity, "\ud800", "\u2028", undefined, () => 1, Symbol("s"), , { f: () => 1, s: Symbol("s") }];
    expect(canonicalJson(value)).toBe(JSON.stringify(value));
    expect(canonicalJson({ z: [undefined], a: -0 })).toBe('{"a":0,"z":[null]}');
  });

  it("gives the same bytes whatever order the keys were built in", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), (value, seed) => {
        expect(canonicalJson(shuffled(value, seed))).toBe(canonicalJson(value));
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(anyData, fc.nat(), (value, seed) => {
        expect(canonicalJson(shuffled(value, seed))).toBe(canonicalJson(value));
      }),
      { numRuns: 1000 },
    );
  });

  it("leaves its input as it was", () => {
    const input = { b: [{ d: 1, c: undefined }], a: "x" };
    expect(canonicalJson(input)).toBe('{"a":"x","b":[{"d":1}]}');
    expect(Object.keys(input)).toEqual(["b", "a"]);
    expect(Object.keys(input.b[0]!)).toEqual(["d", "c"]);
  });

  it("serializes a value with toJSON, such as a Date, as JSON.stringify does", () => {
    const when = new Date(Date.UTC(2024, 0, 2));
    expect(canonicalJson({ b: when, a: 1 })).toBe('{"a":1,"b":"2024-01-02T00:00:00.000Z"}');
    expect(canonicalJson([when])).toBe(previousCanonicalJson([when]));
  });
});
