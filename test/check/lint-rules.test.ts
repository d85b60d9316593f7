/**
 * Every rule of `cdsnap check`, each with a failing and a passing case, and the
 * `file:line` it reports. Post files are written line by line (see `post` in
 * test/fixtures/posts.ts: front matter keys on lines 2-7, extra keys from line 8).
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Fixture, removeFixture } from "../fixtures/build-fixture.js";
import { post, writePost } from "../fixtures/posts.js";
import { check, makeCheckFixture, ofRule } from "../fixtures/check-fixture.js";

let fx: Fixture;
beforeEach(async () => {
  fx = await makeCheckFixture();
});
afterEach(async () => {
  await removeFixture(fx);
});

const refs = (n: number) =>
  ["references:", ...Array.from({ length: n }, (_, i) => [`  - source: Source ${i + 1}`, `    url: https://example.com/${i + 1}`]).flat()];

describe("citation-without-reference (error)", () => {
  test("a [N] marker beyond the references list is an error at its body line", async () => {
    // Lines 8-10 references, 11 '---', body from line 12.
    await writePost(fx, "acme/a.md", post("a", refs(1), "Cited once [1].\n\nAnd again [2], and [0].\n"));
    const result = await check(fx);
    expect(ofRule(result, "citation-without-reference").map((f) => [f.severity, f.where, f.message])).toEqual([
      ["error", "acme/a.md:14", "[0] cites reference 0, but references has 1 entry"],
      ["error", "acme/a.md:14", "[2] cites reference 2, but references has 1 entry"],
    ]);
    expect(result.ok).toBe(false);
  });

  test("markers in code, escaped markers, link texts and posts without a references key are not citations", async () => {
    const body = [
      "Cited [1] and [2].",
      "",
      "```",
      "array[3] = 1",
      "```",
      "Inline `x[4]` code, an escaped \\[5\\], a link [6](https://example.com).",
      "<!-- a comment [7] -->",
      "",
    ].join("\n");
    await writePost(fx, "acme/a.md", post("a", refs(2), body));
    // References kept inline in the body (no references key, D3): markers are not checked.
    await writePost(fx, "acme/old.md", post("old", [], "Old style [9].\n\n[9]: https://example.com/nine\n"));
    const result = await check(fx);
    expect(ofRule(result, "citation-without-reference")).toEqual([]);
    expect(result.ok).toBe(true);
  });

  test("an empty references list makes every marker an error", async () => {
    await writePost(fx, "acme/a.md", post("a", ["references: []"], "See [1].\n"));
    expect(ofRule(await check(fx), "citation-without-reference").map((f) => f.where)).toEqual(["acme/a.md:10"]);
  });
});

describe("reference-never-cited (warning)", () => {
  test("a reference no marker cites is a warning at its entry's line", async () => {
    // references: line 8; entry 0 at line 9, entry 1 at line 11, entry 2 at line 13.
    await writePost(fx, "acme/a.md", post("a", refs(3), "Only the second [2].\n"));
    const result = await check(fx);
    expect(ofRule(result, "reference-never-cited").map((f) => [f.severity, f.where])).toEqual([
      ["warning", "acme/a.md:9"],
      ["warning", "acme/a.md:13"],
    ]);
    expect(ofRule(result, "reference-never-cited")[0]!.message).toContain("references.0 (Source 1) is never cited");
    expect(result.ok).toBe(true);
  });

  test("every reference cited: no warning", async () => {
    await writePost(fx, "acme/a.md", post("a", refs(2), "First [1], second [2], first again [1].\n"));
    expect(ofRule(await check(fx), "reference-never-cited")).toEqual([]);
  });
});

describe("broken-internal-link (error)", () => {
  test("links to unknown slugs or missing files are errors at their lines", async () => {
    await writePost(fx, "acme/target.md", post("target"));
    const body = [
      "[one](post:nope)", // line 9
      "[two](./nope)",
      "[three](../missing-slug)",
      "[four](missing.md)",
      "[five](../../other/x.md)",
      "[ref]: post:also-missing",
      "",
    ].join("\n");
    await writePost(fx, "acme/sub/a.md", post("a", [], body));
    const result = await check(fx);
    expect(ofRule(result, "broken-internal-link").map((f) => [f.severity, f.where])).toEqual([
      ["error", "acme/sub/a.md:9"],
      ["error", "acme/sub/a.md:10"],
      ["error", "acme/sub/a.md:11"],
      ["error", "acme/sub/a.md:12"],
      ["error", "acme/sub/a.md:13"],
      ["error", "acme/sub/a.md:14"],
    ]);
    const messages = ofRule(result, "broken-internal-link").map((f) => f.message);
    expect(messages[0]).toBe('links to post:nope, but no post of this organization has the slug "nope"');
    expect(messages[3]).toBe("links to missing.md, but acme/sub/missing.md does not exist");
    expect(messages[4]).toContain("outside this organization's folder acme/");
    expect(result.ok).toBe(false);
  });

  test("links that resolve, and links cdsnap cannot judge, pass", async () => {
    await writePost(fx, "acme/target.md", post("target"));
    const body = [
      "[a](post:target) [b](post:target#part) [c](./target) [d](../target/)",
      "[e](../target.md) [f](<../target.md#top>) [g](/blog/anything) [h](https://example.com/x.md)",
      "[i](#heading) [j](mailto:a@example.com) ![image](./missing.png)",
      "",
    ].join("\n");
    await writePost(fx, "acme/sub/a.md", post("a", [], body));
    expect(ofRule(await check(fx), "broken-internal-link")).toEqual([]);
  });

  test("with a post URL prefix, /blog/<slug> links are checked too", async () => {
    await writePost(fx, "acme/target.md", post("target"));
    await writePost(fx, "acme/a.md", post("a", [], "[ok](/blog/target) and [bad](/blog/gone/) and [other](/shop/gone)\n"));
    const result = await check(fx, { postUrlPrefixes: ["/blog/"] });
    expect(ofRule(result, "broken-internal-link").map((f) => [f.where, f.message])).toEqual([
      ["acme/a.md:9", 'links to /blog/gone/, but no post of this organization has the slug "gone"'],
    ]);
  });

  test("a link to a post the build refused points at an existing file: not reported twice", async () => {
    await writePost(fx, "acme/broken.md", "---\nid: broken\n---\n");
    await writePost(fx, "acme/a.md", post("a", [], "[x](broken.md)\n"));
    const result = await check(fx);
    expect(ofRule(result, "broken-internal-link")).toEqual([]);
    expect(ofRule(result, "build").length).toBeGreaterThan(0);
  });
});

describe("link-to-unpublished (warning)", () => {
  test("a published post linking to a draft, an archived or a scheduled post gets a warning", async () => {
    await writePost(fx, "acme/draft.md", post("draft-one", [], "x\n", "draft"));
    await writePost(fx, "acme/old.md", post("old-one", [], "x\n", "archived"));
    await writePost(fx, "acme/later.md", post("later-one", [], "x\n", "published", "2026-12-24"));
    await writePost(fx, "acme/a.md", post("a", [], "[d](post:draft-one)\n[o](old.md)\n[l](./later-one)\n"));
    const found = ofRule(await check(fx), "link-to-unpublished");
    expect(found.map((f) => [f.severity, f.where])).toEqual([
      ["warning", "acme/a.md:9"],
      ["warning", "acme/a.md:10"],
      ["warning", "acme/a.md:11"],
    ]);
    expect(found[0]!.message).toContain("which is draft");
    expect(found[2]!.message).toContain("scheduled for 2026-12-24T00:00:00.000Z");
  });

  test("links to published posts, and drafts linking to drafts, pass", async () => {
    await writePost(fx, "acme/draft.md", post("draft-one", [], "[t](post:target)\n", "draft"));
    await writePost(fx, "acme/draft2.md", post("draft-two", [], "[d](post:draft-one)\n", "draft"));
    await writePost(fx, "acme/target.md", post("target"));
    await writePost(fx, "acme/a.md", post("a", [], "[t](post:target)\n"));
    expect(ofRule(await check(fx), "link-to-unpublished")).toEqual([]);
  });
});

describe("featured-image-alt (warning)", () => {
  test("a featured image with empty alt text is a warning at the alt line", async () => {
    await writePost(fx, "acme/a.md", post("a", ["featuredImage:", "  url: /a.jpg", '  alt: "  "']));
    const found = ofRule(await check(fx), "featured-image-alt");
    expect(found.map((f) => [f.severity, f.where, f.message])).toEqual([
      ["warning", "acme/a.md:10", "featuredImage.alt is empty; describe the image"],
    ]);
  });

  test("alt text present, or no featured image: no warning", async () => {
    await writePost(fx, "acme/a.md", post("a", ["featuredImage: { url: /a.jpg, alt: A red bicycle }"]));
    await writePost(fx, "acme/b.md", post("b"));
    expect(ofRule(await check(fx), "featured-image-alt")).toEqual([]);
  });
});

describe("excerpt-too-long (warning)", () => {
  test("an explicit excerpt over 200 characters is a warning", async () => {
    await writePost(fx, "acme/a.md", post("a", [`excerpt: ${"é".repeat(201)}`]));
    const found = ofRule(await check(fx), "excerpt-too-long");
    expect(found.map((f) => [f.severity, f.where, f.message])).toEqual([
      ["warning", "acme/a.md:8", "excerpt is 201 characters; keep it to 200"],
    ]);
  });

  test("200 characters (code points), or a derived excerpt from a long body, pass", async () => {
    await writePost(fx, "acme/a.md", post("a", [`excerpt: ${"😀".repeat(200)}`]));
    await writePost(fx, "acme/b.md", post("b", [], `${"word ".repeat(300)}\n`));
    expect(ofRule(await check(fx), "excerpt-too-long")).toEqual([]);
  });
});

describe("seo-title-too-long (warning)", () => {
  test("an SEO title over 60 characters is a warning at its line", async () => {
    await writePost(fx, "acme/a.md", post("a", ["seoMetadata:", `  title: ${"t".repeat(61)}`]));
    const found = ofRule(await check(fx), "seo-title-too-long");
    expect(found.map((f) => [f.severity, f.where, f.message])).toEqual([
      ["warning", "acme/a.md:9", "seoMetadata.title is 61 characters; search results show about 60"],
    ]);
  });

  test("without an SEO title, a long title stands in for it (D3) and is reported at the title line", async () => {
    await writePost(fx, "acme/a.md", post("a").replace("title: Post a", `title: ${"t".repeat(70)}`));
    expect(ofRule(await check(fx), "seo-title-too-long").map((f) => f.where)).toEqual(["acme/a.md:3"]);
  });

  test("a blank SEO title is no SEO title: the long title standing in for it is reported at the title line", async () => {
    await writePost(fx, "acme/a.md", post("a", ['seoMetadata: { title: "  " }']).replace("title: Post a", `title: ${"t".repeat(70)}`));
    const found = ofRule(await check(fx), "seo-title-too-long");
    expect(found.map((f) => [f.where, f.message])).toEqual([
      ["acme/a.md:3", "title (the SEO title when seoMetadata.title is absent or blank) is 70 characters; search results show about 60"],
    ]);
  });

  test("a long title with a short SEO title, or 60 characters, pass", async () => {
    await writePost(fx, "acme/a.md", post("a", ["seoMetadata: { title: Short }"]).replace("title: Post a", `title: ${"t".repeat(70)}`));
    await writePost(fx, "acme/b.md", post("b", ["seoMetadata:", `  title: ${"t".repeat(60)}`]));
    expect(ofRule(await check(fx), "seo-title-too-long")).toEqual([]);
  });
});

describe("seo-description-too-long (warning)", () => {
  test("an SEO description over 160 characters is a warning at its line", async () => {
    await writePost(fx, "acme/a.md", post("a", ["seoMetadata:", "  title: T", `  description: ${"d".repeat(161)}`]));
    const found = ofRule(await check(fx), "seo-description-too-long");
    expect(found.map((f) => [f.severity, f.where, f.message])).toEqual([
      ["warning", "acme/a.md:10", "seoMetadata.description is 161 characters; search results show about 160"],
    ]);
  });

  test("160 characters pass", async () => {
    await writePost(fx, "acme/a.md", post("a", ["seoMetadata:", `  description: ${"d".repeat(160)}`]));
    expect(ofRule(await check(fx), "seo-description-too-long")).toEqual([]);
  });
});

describe("scheduled-post (warning)", () => {
  test("a published post dated after now is a warning saying when it appears", async () => {
    await writePost(fx, "acme/a.md", post("a", [], "x\n", "published", "2026-07-01T09:30:00+02:00"));
    const found = ofRule(await check(fx, { now: new Date("2026-07-01T07:00:00Z") }), "scheduled-post");
    expect(found.map((f) => [f.severity, f.where, f.message])).toEqual([
      [
        "warning",
        "acme/a.md:6",
        "publishedAt is in the future: the post is scheduled and appears with the first build after 2026-07-01T07:30:00.000Z",
      ],
    ]);
  });

  test("a past published post, and a future-dated draft, pass", async () => {
    await writePost(fx, "acme/a.md", post("a", [], "x\n", "published", "2026-06-30"));
    await writePost(fx, "acme/b.md", post("b", [], "x\n", "draft", "2030-01-01"));
    expect(ofRule(await check(fx), "scheduled-post")).toEqual([]);
  });
});

describe("what the build refuses (rule build, errors)", () => {
  test("duplicate slugs, unknown categories and invalid front matter are errors with file:line", async () => {
    await writePost(fx, "acme/a.md", post("same"));
    await writePost(fx, "acme/b.md", post("same").replace("id: same", "id: other-id"));
    await writePost(fx, "acme/c.md", post("c", ["category: nowhere"]));
    await writePost(fx, "acme/d.md", post("d").replace("status: published", "status: live"));
    const result = await check(fx);
    const build = ofRule(result, "build").map((f) => [f.severity, f.where.replace(/:\d+$/, ""), f.message]);
    expect(build).toContainEqual(["error", "acme/b.md", expect.stringMatching(/^slug: "same" is also used by acme\/a\.md/)]);
    expect(build).toContainEqual(["error", "acme/c.md", 'category: "nowhere" is not a category of organization acme; its categories are: guides, news']);
    expect(build).toContainEqual(["error", "acme/d.md", expect.stringMatching(/^status: /)]);
    for (const f of ofRule(result, "build").filter((f) => f.where.startsWith("acme/d.md"))) expect(f.where).toBe("acme/d.md:5");
    expect(result.ok).toBe(false);
  });

  test("unique slugs and known categories pass", async () => {
    await writePost(fx, "acme/a.md", post("a", ["category: news"]));
    await writePost(fx, "acme/b.md", post("b", ["category: guides"]));
    const result = await check(fx);
    expect(result).toMatchObject({ ok: true, errors: [], warnings: [], postsChecked: 2 });
  });

  test("bad database rows and folders without an organization are errors too", async () => {
    await writePost(fx, "ghost/a.md", post("a"));
    const { openDatabase } = await import("../../src/db/open.js");
    const db = openDatabase(fx.db);
    db.prepare("INSERT INTO blocks (org_id, id, slug, name, status) VALUES ('acme', 'b1', 'Not A Slug', 'B', 'published')").run();
    db.close();
    const wheres = ofRule(await check(fx), "build").map((f) => f.where);
    expect(wheres).toEqual(["blocks[org_id=acme id=b1]", "ghost/"]);
  });
});
