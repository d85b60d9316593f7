/**
 * Front matter safety: a post file means exactly what it says. Hostile or
 * broken YAML is a clear error naming the file, never code execution, never a
 * hang, never a silently different value.
 */
import { describe, expect, test } from "vitest";
import { fileOf } from "../../src/api-paths.js";
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
