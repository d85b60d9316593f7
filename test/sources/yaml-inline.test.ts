/**
 * The fast path's one-line values are recognised by a scan (yaml-inline.ts)
 * that replaced a regular expression: it must accept exactly what that
 * expression accepted, and, unlike it, read a value of any length.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parsePost } from "../../src/sources/front-matter.js";
import { isInlineValue, KEY } from "../../src/sources/yaml-inline.js";

// The regular expression the scan replaced, kept as the oracle for short lines.
const END = String.raw`(?: +#.*| *)$`;
const SINGLE = String.raw`'(?:[^']|'')*'`;
const DOUBLE = String.raw`"(?:[^"\\]|\\(?:[\\"/ntr]|u(?![Dd][89A-Fa-f])[0-9A-Fa-f]{4}))*"`;
const PLAIN_FIRST = String.raw`(?:[^-?:,[\]{}#&*!|>'"%@\` ]|[-?:](?=[^ ,[\]{}#]))`;
const BLOCK_PLAIN = String.raw`${PLAIN_FIRST}(?:[^:# ]|:(?! |$)|#| +(?=[^ #]))*`;
const FLOW_PLAIN = String.raw`${PLAIN_FIRST}(?:[^,[\]{}:# ]|:(?=[^ ,[\]{}])|#| +(?=[^ ,[\]{}#:]))*`;
const FLOW_ITEM = `(?:${SINGLE}|${DOUBLE}|${FLOW_PLAIN})`;
const FLOW_PAIR = `${KEY}: +${FLOW_ITEM}`;
const FLOW_SEQ = String.raw`\[ *(?:${FLOW_ITEM}(?: *, *${FLOW_ITEM})* *)?\]`;
const FLOW_MAP = String.raw`\{ *(?:${FLOW_PAIR}(?: *, *${FLOW_PAIR})* *)?\}`;
const ORACLE = new RegExp(`^(?:${SINGLE}|${DOUBLE}|${FLOW_SEQ}|${FLOW_MAP}|${BLOCK_PLAIN})${END}`);

// Every character the expression treats apart, a few that it does not, and pieces that form keys and escapes.
const PIECES = [
  ..."'\"[]{},:#-?&*!|>%@` \\/ntruDd8aZ_09é😀\t",
  ...["''", "\\u0041", "\\uD800", "\\ud83d", "\\x41", "\\q", "null:", "true:", "key: ", "k_1: ", '"k": ', "'k': ", " #", ": ", "  "],
];
const junk = (maxLength: number) => fc.array(fc.constantFrom(...PIECES), { maxLength }).map((parts) => parts.join(""));
const single = fc.oneof(junk(5).map((s) => `'${s.replaceAll("'", "''")}'`), junk(5).map((s) => `'${s}'`));
const double = fc
  .array(fc.constantFrom("a", " ", ":", "#", "'", '\\"', "\\\\", "\\n", "\\/", "\\u00e9", "\\uD83D", "\\x41", '"', "é"), { maxLength: 5 })
  .map((parts) => `"${parts.join("")}"`);
const item = fc.oneof(single, double, junk(4));
const separator = fc.constantFrom(",", ", ", " , ", ",  ", " ", "");
const key = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("k", "url", "k-1", "_k", "nulls", '"k"', "'k'", "x".repeat(64)) },
  { weight: 1, arbitrary: fc.constantFrom("null", "True", "FALSE", "1k", "x".repeat(65), "", '"k k"') },
);
const listOf = (element: fc.Arbitrary<string>, open: string, close: string) =>
  fc
    .tuple(fc.constantFrom("", " "), fc.array(fc.tuple(element, separator), { maxLength: 4 }), fc.constantFrom("", " "))
    .map(([before, items, after]) => `${open}${before}${items.map(([text, sep], i) => (i === items.length - 1 ? text : text + sep)).join("")}${after}${close}`);
const pair = fc.tuple(key, fc.constantFrom(": ", ": ", ":  ", ":", " : "), item).map(([k, colon, value]) => k + colon + value);
const value = fc.oneof(single, double, listOf(item, "[", "]"), listOf(pair, "{", "}"), junk(8));
const tail = fc.constantFrom("", " ", "  ", " # c", " #", "#c", "x", " x", ":", ",");
// Valid-looking values with a tail, some broken by one piece inserted anywhere.
const line = fc
  .tuple(value, tail, fc.option(fc.tuple(fc.nat(), fc.constantFrom(...PIECES)), { nil: undefined }))
  .map(([text, end, edit]) => {
    const whole = text + end;
    if (!edit) return whole;
    const at = edit[0] % (whole.length + 1);
    return whole.slice(0, at) + edit[1] + whole.slice(at);
  });

const REQUIRED = ["id: p1", "slug: p1", "status: published", "publishedAt: 2026-01-05", "authorName: A"];

describe("isInlineValue", () => {
  test("accepts exactly the lines the regular expression it replaced accepts", () => {
    const accepted = { "'": 0, '"': 0, "[": 0, "{": 0, plain: 0 };
    fc.assert(
      fc.property(line, (text) => {
        const answer = isInlineValue(text);
        expect(answer).toBe(ORACLE.test(text));
        if (answer) accepted[text[0] && text[0] in accepted ? (text[0] as keyof typeof accepted) : "plain"]++;
      }),
      { numRuns: 50_000 },
    );
    // Each kind of value is accepted often enough for the comparison to mean something (and refused the rest of the time).
    for (const count of Object.values(accepted)) expect(count).toBeGreaterThan(300);
  });

  test.each([
    ["a plain title", "Why static beats dynamic"],
    ["a comment after a value", "'quoted' # note"],
    ["a flow sequence", "[a, 'b', \"c\"]"],
    ["a flow mapping", "{ url: /x.jpg, alt: 'A rack' }"],
    ["an escaped double-quoted value", '"say \\"hi\\" \\u00e9"'],
    ["a value ending in ':'", "Bread:"],
    ["': ' inside a plain value", "Bread: a history"],
    ["a trailing comma", "[a, b,]"],
    ["a nested flow sequence", "[a, [b]]"],
    ["a lone surrogate escape", '"\\ud800"'],
    ["text after a quoted value", "'a'b"],
  ])("%s: as the regular expression says", (_name, text) => {
    expect(isInlineValue(text)).toBe(ORACLE.test(text));
  });

  // 9 MiB, past the 8 MiB at which the regular expression ran out of stack on a title.
  const SIZE = 9 * 2 ** 20;
  test.each([
    ["a plain title", "a".repeat(SIZE)],
    ["a plain title of words", "a ".repeat(SIZE / 2) + "a"],
    ["a single-quoted title", `'${"it''s ".repeat(SIZE / 8)}'`],
    ["a double-quoted title", `"${"\\u00e9\\n".repeat(SIZE / 8)}"`],
    ["a flow sequence", `[${"a, ".repeat(SIZE / 3)}a]`],
    ["a flow mapping", `{${"k: v, ".repeat(SIZE / 6)}k: v}`],
  ])("reads %s of 9 MiB without running out of stack", (_name, text) => {
    expect(isInlineValue(text)).toBe(true);
  });

  test("a post whose title is just under the front matter limit is read, on the fast path and the slow one", () => {
    const title = "a ".repeat(480 * 1024);
    const fast = parsePost("acme/long.md", ["---", `title: ${title}`, ...REQUIRED, "---", "Body"].join("\n"));
    expect(fast.problems).toEqual([]);
    expect(fast.post?.meta.title).toBe(title.trimEnd());
    // A tag sends it to yaml, which must read the same length without a stack problem.
    const slow = parsePost("acme/long.md", ["---", `title: !!str ${title}`, ...REQUIRED, "---", "Body"].join("\n"));
    expect(slow.post?.meta.title).toBe(title.trimEnd());
  });
});
