import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/render/canonical-json.js";

/** The definition: every object rebuilt with its keys in code-unit order, undefined members dropped. */
function reference(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) {
        const member = (v as Record<string, unknown>)[key];
        if (member !== undefined) out[key] = sort(member);
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(sort(value));
}

/** The same data with every object's keys in another order. */
function shuffled(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffled(v, seed + 1));
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    const rotated = entries.slice(seed % (entries.length || 1)).concat(entries.slice(0, seed % (entries.length || 1))).reverse();
    return Object.fromEntries(rotated.map(([k, v]) => [k, shuffled(v, seed + 1)]));
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

describe("canonical JSON", () => {
  it("equals the definition on any data, in order or not, with undefined members", () => {
    fc.assert(
      fc.property(withUndefined, (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 2000 },
    );
  });

  it("gives the same bytes whatever order the keys were built in", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), (value, seed) => {
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
});
