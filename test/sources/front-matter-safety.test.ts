/**
 * Front matter safety: a post file means exactly what it says. Hostile or
 * broken YAML is a clear error naming the file, never code execution, never a
 * hang, never a silently different value.
 */
import { describe, expect, test } from "vitest";
import { fileOf } from "../../src/api-paths.js";
import { MAX_FRONT_MATTER_BYTES, MAX_FRONT_MATTER_DEPTH, MAX_MAPPING_KEYS } from "../../src/sources/front-matter-bounds.js";
import { parsePost } from "../../src/sources/front-matter.js";
import type { ContentDetail } from "../../src/model/api.js";
import { buildFixture, buildProblems, fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { writePost } from "../fixtures/posts.js";
import { pathExists, readTreeJson } from "../fixtures/tree.js";

const { orgFixture } = fixturesRemovedAfterEach();


const REQUIRED = ["id: p1", "title: T", "slug: p1", "status: published", "publishedAt: 2026-01-05", "authorName: A"];

/** Builds with one bad file and returns the problems, checking nothing was written. */
async function problemsOf(text: string | Buffer): Promise<{ where: string; message: string }[]> {
  const fx = await orgFixture();
  await writePost(fx.content, "acme/bad.md", text);
  const problems = await buildProblems(fx);
  expect(await pathExists(fx.out)).toBe(false);
  return problems;
}

describe("front matter safety", () => {
  test("a !!js/function tag is an error, not code", async () => {
    const text = ["---", ...REQUIRED, 'excerpt: !!js/function "function () { process.exit(42) }"', "---", "Body"].join("\n");
    const problems = await problemsOf(text);
    expect(problems).toEqual([expect.objectContaining({ where: "acme/bad.md:8" })]);
    expect(problems[0]?.message).toMatch(/^front matter: /);
  });

  test("a custom tag is an error", async () => {
    const text = ["---", ...REQUIRED, "excerpt: !secret value", "---", "Body"].join("\n");
    expect(await problemsOf(text)).toEqual([expect.objectContaining({ where: "acme/bad.md:8" })]);
  });

  test("an alias bomb is refused quickly with an error naming the file", async () => {
    const bomb = [
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
      "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
      "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
      "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]",
      "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]",
      "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]",
    ];
    const problems = await problemsOf(["---", ...REQUIRED, ...bomb, "---", "Body"].join("\n"));
    expect(problems.length).toBeGreaterThan(0);
    for (const p of problems) expect(p.where).toMatch(/^acme\/bad\.md:\d+$/);
  });

  test("unterminated front matter is an error at line 1", async () => {
    const problems = await problemsOf(["---", ...REQUIRED, "", "Body without a closing line"].join("\n"));
    expect(problems).toEqual([{ where: "acme/bad.md:1", message: expect.stringMatching(/no closing '---'/) }]);
  });

  test("a ---js opening is not front matter", async () => {
    const problems = await problemsOf(["---js", "module.exports = { id: 'p1' }", "---", "Body"].join("\n"));
    expect(problems).toEqual([{ where: "acme/bad.md:1", message: expect.stringMatching(/must start with a '---' line/) }]);
  });

  test("a file with no front matter is an error", async () => {
    const problems = await problemsOf("# Just markdown\n\nNo front matter here.\n");
    expect(problems).toEqual([{ where: "acme/bad.md:1", message: expect.stringMatching(/must start with a '---' line/) }]);
  });

  test("a list used as a key is an unknown key, and yaml prints no warning of its own", async () => {
    const emitted: unknown[] = [];
    const listen = (warning: unknown) => emitted.push(warning);
    process.on("warning", listen);
    try {
      const problems = await problemsOf(["---", ...REQUIRED, "? [a, b]", ": c", "---", "Body"].join("\n"));
      expect(problems).toEqual([{ where: expect.stringMatching(/^acme\/bad\.md:\d+$/), message: "[ a, b ]: unknown key" }]);
      // Node emits a warning on the next tick: one turn of the event loop lets it arrive.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", listen);
    }
    expect(emitted).toEqual([]);
  });

  test("front matter that is a list, not a mapping, is an error", async () => {
    const problems = await problemsOf(["---", "- id", "- title", "---", "Body"].join("\n"));
    expect(problems).toEqual([{ where: "acme/bad.md:2", message: expect.stringMatching(/must be a mapping/) }]);
  });

  test("a key given twice is an error, not last-one-wins", async () => {
    const problems = await problemsOf(["---", ...REQUIRED, "title: Other", "---", "Body"].join("\n"));
    expect(problems).toEqual([expect.objectContaining({ where: "acme/bad.md:8" })]);
  });

  test("a merge key is not merged", async () => {
    const text = ["---", "base: &base { id: p1 }", "<<: *base", ...REQUIRED.slice(1), "---", "Body"].join("\n");
    const problems = await problemsOf(text);
    expect(problems.length).toBeGreaterThan(0);
    for (const p of problems) expect(p.where).toMatch(/^acme\/bad\.md:\d+$/);
  });

  test("bytes that are not UTF-8 are an error naming the file", async () => {
    const text = Buffer.concat([
      Buffer.from(["---", ...REQUIRED].join("\n") + "\nexcerpt: caf"),
      Buffer.from([0xe9, 0xff]),
      Buffer.from("\n---\nBody\n"),
    ]);
    expect(await problemsOf(text)).toEqual([{ where: "acme/bad.md", message: "is not valid UTF-8 text" }]);
  });

  test("a file with a BOM and CRLF line endings builds, its values and body unchanged", async () => {
    const fx = await orgFixture();
    const body = "First line of the body.\r\n\r\n---\r\n\r\nAfter a thematic break.\r\n";
    const text = `\uFEFF---\r\n${[...REQUIRED.slice(0, 1), "title: Windows post", ...REQUIRED.slice(2)].join("\r\n")}\r\n---\r\n${body}`;
    await writePost(fx.content, "acme/windows.md", text);
    await buildFixture(fx);
    const detail = await readTreeJson<ContentDetail>(fx.out, fileOf({ kind: "content", orgId: "acme", id: "p1" }));
    expect(detail.title).toBe("Windows post");
    expect(detail.authorName).toBe("A");
    expect(detail.publishedAt).toBe("2026-01-05");
    expect(detail.content).toBe(body);
  });
});

/** A post with the required keys on lines 2-7, then `extra` from line 8. */
const withExtra = (...extra: string[]) => ["---", ...REQUIRED, ...extra, "---", "Body"].join("\n");
// `excerpt` nested `depth` levels deep, four ways; each opens on line 8.
const NESTED: Record<string, (depth: number) => string> = {
  "flow lists": (depth) => `excerpt: ${"[".repeat(depth)}x${"]".repeat(depth)}`,
  "flow mappings": (depth) => `excerpt: ${"{a: ".repeat(depth)}x${"}".repeat(depth)}`,
  "compact lists": (depth) => `excerpt:\n${"- ".repeat(depth)}x`,
  "indented mappings": (depth) => `excerpt:\n${Array.from({ length: depth }, (_, i) => `${" ".repeat(i + 1)}k${i}:`).join("\n")} x`,
};

describe("front matter bounds", () => {
  test("front matter over 1 MiB is refused at the line that passes the limit, and the message says the limit", async () => {
    const title = "a".repeat(MAX_FRONT_MATTER_BYTES);
    const problems = await problemsOf(["---", "id: p1", `title: ${title}`, ...REQUIRED.slice(2), "---", "Body"].join("\n"));
    expect(problems).toEqual([{ where: "acme/bad.md:3", message: expect.stringMatching(/^front matter: is 1,025 KiB, over the limit of 1,024 KiB \(1 MiB\)/) }]);
    expect(problems[0]!.message).toMatch(/move long text into the body/);
  });

  test("a 10 MB value, past the size at which a regular expression ran out of stack, is refused with its line", () => {
    const result = parsePost("acme/bad.md", withExtra(`excerpt: ${"word ".repeat(2 * 2 ** 20)}`));
    expect(result.problems).toEqual([{ where: "acme/bad.md:8", message: expect.stringMatching(/^front matter: is 10,241 KiB, over the limit/) }]);
  });

  test("the limit counts bytes: 1 MiB of three-byte characters is over it", () => {
    const result = parsePost("acme/bad.md", withExtra(`excerpt: ${"€".repeat(MAX_FRONT_MATTER_BYTES / 3 + 1)}`));
    expect(result.problems).toEqual([{ where: "acme/bad.md:8", message: expect.stringMatching(/over the limit of 1,024 KiB/) }]);
  });

  test.each(Object.keys(NESTED))("%s nested past the bound are refused at their line, not with an engine's message", (form) => {
    // 50,000 levels of indentation are past the size bound, which the tests above cover.
    for (const depth of form === "indented mappings" ? [MAX_FRONT_MATTER_DEPTH + 1, 1_000] : [MAX_FRONT_MATTER_DEPTH + 1, 50_000]) {
      const { problems } = parsePost("acme/bad.md", withExtra(NESTED[form]!(depth)));
      expect(problems).toHaveLength(1);
      expect(problems[0]!.where).toMatch(/^acme\/bad\.md:\d+$/);
      expect(problems[0]!.message).toMatch(/^front matter: lists and mappings nest more than 64 levels deep here, the most cdsnap reads; .*remove the extra/);
    }
  });

  test.each(Object.keys(NESTED))("%s nested to the bound are read: the post is refused for its value, not its depth", (form) => {
    const { problems } = parsePost("acme/bad.md", withExtra(NESTED[form]!(MAX_FRONT_MATTER_DEPTH - 1)));
    expect(problems).toEqual([{ where: expect.stringMatching(/^acme\/bad\.md:[89]$/), message: expect.stringMatching(/^excerpt: /) }]);
  });

  test.each([
    ["block", (n: number) => Array.from({ length: n }, (_, i) => `k${i}: v`)],
    ["flow", (n: number) => [`seoMetadata: {${Array.from({ length: n }, (_, i) => `k${i}: v`).join(", ")}}`]],
  ])("a %s mapping of 60,000 keys is one problem at the first key past 1,000, not a minute of duplicate checks", (style, keys) => {
    const { problems } = parsePost("acme/bad.md", withExtra(...keys(60_000)));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toMatch(/^front matter: this key is past the 1,000 keys of one mapping, the most cdsnap reads; /);
    // The top-level mapping has the six required keys (lines 2-7) before k0 on line 8.
    expect(problems[0]!.where).toBe(style === "block" ? `acme/bad.md:${8 + MAX_MAPPING_KEYS - 6}` : "acme/bad.md:8");
  });

  test("a mapping of 1,000 keys is read: each key that is not a post's is its own problem", () => {
    const { problems } = parsePost("acme/bad.md", withExtra(...Array.from({ length: MAX_MAPPING_KEYS - 6 }, (_, i) => `k${i}: v`)));
    expect(problems).toHaveLength(MAX_MAPPING_KEYS - 6);
    expect(problems[0]).toEqual({ where: "acme/bad.md:8", message: "k0: unknown key" });
  });

  test("a bad value of half a megabyte with a long run of spaces gets its message (the suggestion used to take minutes)", () => {
    const { problems } = parsePost("acme/bad.md", withExtra(`excerpt: @a${" ".repeat(500_000)}b`));
    expect(problems).toEqual([{ where: "acme/bad.md:8", message: expect.stringMatching(/^front matter: a value starting with '@' must be quoted: excerpt: "@a +…$/) }]);
  });

  test("an unclosed quote of half a megabyte is reported at its line", () => {
    const { problems } = parsePost("acme/bad.md", withExtra(`excerpt: 'it''s ${"x".repeat(500_000)}`, "category: news"));
    expect(problems).toEqual([{ where: "acme/bad.md:8", message: expect.stringMatching(/^front matter: the quote ' on line 8 is never closed/) }]);
  });
});

