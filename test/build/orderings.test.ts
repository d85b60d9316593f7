/**
 * D2 on minimal data chosen so that any other order (insertion order, locale
 * collation, string comparison of numbers, date-only comparison) gives a
 * different answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { fileOf, type Route } from "../../src/api-paths.js";
import type { Block, CategoryList, ContentDetail, ContentList, Organization } from "../../src/model/api.js";
import { buildFixture, type Fixture, makeFixture, removeDir } from "../fixtures/build-fixture.js";
import { insertBlock, insertCategory, insertOffer, insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { liveGenerationOf, readPages, readTreeJson } from "../fixtures/tree.js";

const ORG = "acme";
let fx: Fixture;
const read = <T>(route: Route) => readTreeJson<T>(fx.out, fileOf(route));

beforeAll(async () => {
  fx = await makeFixture();
  withDb(fx.db, (db) => {
    insertOrg(db, { id: ORG, slug: "acme" });
    // Inserted in an order that is neither the expected one nor its reverse.
    insertBlock(db, ORG, { id: "a", slug: "lower-a", position: 0, pages: ["home"] });
    insertBlock(db, ORG, { id: "late", slug: "late", position: 10, pages: ["home"] });
    insertBlock(db, ORG, { id: "B", slug: "upper-b", position: 0, pages: ["home"] });
    insertBlock(db, ORG, { id: "nine", slug: "nine", position: 9, pages: ["home"] });
    insertBlock(db, ORG, { id: "first", slug: "first", position: -1 });
    insertBlock(db, ORG, { id: "draft-zero", slug: "draft-zero", position: -5, status: "draft", pages: ["home"] });
    insertBlock(db, ORG, {
      id: "fields",
      slug: "fields",
      position: 20,
      fields: [
        { key: "third", type: "text", value: "3", position: 7 },
        { key: "first", type: "text", value: "1", position: 0 },
        { key: "second", type: "image", value: { url: "/b.png", alt: "" }, position: 2 },
      ],
    });

    insertCategory(db, ORG, { id: "c-apple", slug: "apple", value: "apple", position: 1 });
    insertCategory(db, ORG, { id: "c-zebra", slug: "zebra", value: "Zebra", position: 1 });
    insertCategory(db, ORG, { id: "c-ten", slug: "ten", value: "Ten", position: 10 });
    insertCategory(db, ORG, { id: "c-two", slug: "two", value: "Two", position: 2 });
    insertCategory(db, ORG, { id: "same-b", slug: "same-b", value: "Same", position: 3 });
    insertCategory(db, ORG, { id: "Same-B", slug: "same-upper", value: "Same", position: 3 });

    insertOffer(db, ORG, { position: 2, name: "C offer", description: "third" });
    insertOffer(db, ORG, { position: 0, name: "Z offer", description: "first", link: "https://z.example/" });
    insertOffer(db, ORG, { position: 1, name: "A offer", description: "second" });
  });

  // Same calendar day: a date-time later that day beats the date-only post, whose slug sorts first.
  await writePost(fx.content, "acme/1.md", postMeta("day-only", { slug: "a-day-only", publishedAt: "2026-03-01" }));
  await writePost(fx.content, "acme/2.md", postMeta("day-noon", { slug: "z-day-noon", publishedAt: "2026-03-01T12:00:00Z" }));
  // Written as 2026-03-01 but, at +02:00, an instant on 2026-02-28: older than the date-only post.
  await writePost(
    fx.content,
    "acme/3.md",
    postMeta("day-early", { slug: "b-day-early", publishedAt: "2026-03-01T01:00:00+02:00" }),
  );
  // The same instant written two ways: a tie, broken by slug (files in the opposite order).
  await writePost(fx.content, "acme/4.md", postMeta("tie-2", { slug: "tie-b", publishedAt: "2026-02-01" }));
  await writePost(fx.content, "acme/5.md", postMeta("tie-1", { slug: "tie-a", publishedAt: "2026-02-01T00:00:00Z" }));
  // Newest of all by a millisecond fraction.
  await writePost(
    fx.content,
    "acme/6.md",
    postMeta("fraction", { slug: "fraction", publishedAt: "2026-03-02T00:00:00.001Z" }),
  );
  await writePost(fx.content, "acme/7.md", postMeta("midnight", { slug: "a-midnight", publishedAt: "2026-03-02" }));
  await buildFixture(fx);
});

afterAll(async () => {
  await removeDir(fx.dir);
});

describe("D2 orderings", () => {
  test("contents: newest first by full instant, a later time on the same day beats date-only, ties by slug", async () => {
    const list = await read<ContentList>({ kind: "contents", orgId: ORG });
    expect(list.items.map((i) => i.id)).toEqual(["fraction", "midnight", "day-noon", "day-only", "day-early", "tie-1", "tie-2"]);
  });

  test("a date-time's publishedAt keeps the written date even when its instant is the day before", async () => {
    const post = await read<ContentDetail>({ kind: "content", orgId: ORG, id: "day-early" });
    expect(post.publishedAt).toBe("2026-03-01");
  });

  test("blocks: position ascending (numerically), then id in code-unit order (B before a)", async () => {
    const list = await read<{ items: Block[] }>({ kind: "blocks", orgId: ORG });
    expect(list.items.map((b) => b.id)).toEqual(["first", "B", "a", "nine", "late", "fields"]);
  });

  test("page membership follows the same block order", async () => {
    const pages = await readPages(await liveGenerationOf(fx.out), ORG);
    expect(pages).toEqual({ home: ["B", "a", "nine", "late"] });
  });

  test("categories: position, then value in code-unit order (Zebra before apple), then id", async () => {
    const list = await read<CategoryList>({ kind: "categories", orgId: ORG });
    expect(list.items.map((c) => c.id)).toEqual(["c-zebra", "c-apple", "c-two", "Same-B", "same-b", "c-ten"]);
    expect(list.items[0]).toEqual({ id: "c-zebra", slug: "zebra", value: "Zebra" });
  });

  test("fields: position ascending, whatever the insertion order and gaps", async () => {
    const block = await read<Block>({ kind: "block", orgId: ORG, id: "fields" });
    expect(block.fields.map((f) => f.key)).toEqual(["first", "second", "third"]);
  });

  test("offers: the stored order, not alphabetical and not insertion order", async () => {
    const org = await read<Organization>({ kind: "organization", orgId: ORG });
    expect(org.businessOffers).toEqual([
      { name: "Z offer", description: "first", link: "https://z.example/" },
      { name: "A offer", description: "second" },
      { name: "C offer", description: "third" },
    ]);
  });
});
