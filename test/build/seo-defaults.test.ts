/**
 * D3: `seoMetadata.title` defaults to `title` and `seoMetadata.description` to
 * `excerpt`; a default applies when the member is absent or blank (empty or
 * whitespace only). The title itself is required, so a blank one is refused.
 * Hand-written posts, the real build, the files it publishes.
 */
import { describe, expect, test } from "vitest";
import { fileOf } from "../../src/api-paths.js";
import type { ContentDetail, ContentList } from "../../src/model/api.js";
import { buildFixture, buildProblems, fixturesRemovedAfterEach, type Fixture } from "../fixtures/build-fixture.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { readTreeJson } from "../fixtures/tree.js";

const org = "acme";
const { orgFixture } = fixturesRemovedAfterEach();

/** Builds the posts, then answers each one's seoMetadata, by id file and in the list alike. */
async function seoOf(site: Fixture, ids: readonly string[]): Promise<Map<string, ContentDetail["seoMetadata"]>> {
  await buildFixture(site);
  const list = await readTreeJson<ContentList>(site.out, fileOf({ kind: "contents", orgId: org }));
  const seo = new Map<string, ContentDetail["seoMetadata"]>();
  for (const id of ids) {
    const detail = await readTreeJson<ContentDetail>(site.out, fileOf({ kind: "content", orgId: org, id }));
    expect(list.items.find((item) => item.id === id)?.seoMetadata).toEqual(detail.seoMetadata);
    seo.set(id, detail.seoMetadata);
  }
  return seo;
}

describe("seoMetadata defaults", () => {
  test("a title that is absent, empty or whitespace only is the post's title; any other is kept as written", async () => {
    const site = await orgFixture(org);
    const posts: [string, Record<string, unknown> | undefined][] = [
      ["absent", undefined],
      ["empty", { title: "" }],
      ["spaces", { title: "  \t " }],
      ["own", { title: " Roasting, briefly " }],
    ];
    for (const [id, seoMetadata] of posts) {
      await writePost(site, `${org}/${id}.md`, postMeta(id, { title: `The ${id} post`, ...(seoMetadata ? { seoMetadata } : {}) }));
    }
    const seo = await seoOf(site, posts.map(([id]) => id));
    expect(seo.get("absent")?.title).toBe("The absent post");
    expect(seo.get("empty")?.title).toBe("The empty post");
    expect(seo.get("spaces")?.title).toBe("The spaces post");
    expect(seo.get("own")?.title).toBe(" Roasting, briefly ");
  });

  test("a description that is absent, empty or whitespace only is the excerpt, given or derived", async () => {
    const site = await orgFixture(org);
    await writePost(site, `${org}/given.md`, postMeta("given", { excerpt: "Given excerpt.", seoMetadata: { description: "" } }));
    await writePost(site, `${org}/derived.md`, postMeta("derived", { seoMetadata: { description: " \n " } }), "## Beans\n\nA **short** body [1].\n");
    await writePost(site, `${org}/own.md`, postMeta("own", { excerpt: "Given excerpt.", seoMetadata: { description: "For search." } }));
    const seo = await seoOf(site, ["given", "derived", "own"]);
    expect(seo.get("given")?.description).toBe("Given excerpt.");
    expect(seo.get("derived")?.description).toBe("Beans A short body.");
    expect(seo.get("own")?.description).toBe("For search.");
  });
});

describe("the title the defaults fall back on", () => {
  test("a whitespace-only title is a build error at its line; an empty one too", async () => {
    const site = await orgFixture(org);
    await writePost(site, `${org}/spaces.md`, postMeta("spaces", { title: "   " }));
    await writePost(site, `${org}/empty.md`, postMeta("empty", { title: "" }));
    expect(await buildProblems(site)).toEqual([
      { where: `${org}/empty.md:3`, message: "title: must not be empty" },
      { where: `${org}/spaces.md:3`, message: "title: must not be blank" },
    ]);
  });
});
