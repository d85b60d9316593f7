/**
 * planOrg on its own, without a build: what one organization publishes from
 * its snapshot and post records at an instant (D1), in which order (D2), with
 * which page membership (D8), and the organization file it writes (D4); and
 * the three files of one published post (renderPostFiles: D3's references rule).
 */
import { describe, expect, test } from "vitest";
import { pathOf } from "../../src/api-paths.js";
import type { Block, CategoryList, ContentList, ContentSummary, Organization } from "../../src/model/api.js";
import type { PostHead } from "../../src/model/snapshot.js";
import { categoriesBySlug, categoryKeyOf, planOrg, renderPostFiles, type OrgPlan } from "../../src/render/render-org.js";
import { post } from "../fixtures/posts.js";
import { blockRecord, categoryRecord, orgSnapshot, postRecord } from "../fixtures/records.js";

const ORG = "acme";
const NOW = Date.parse("2026-07-01T00:00:00Z");

/** A post of acme whose id and slug are `slug`, with extra front matter lines. */
const record = (slug: string, publishedAt: string, status = "published", extra: string[] = [], body = "A body.\n") =>
  postRecord(`${ORG}/${slug}.md`, post(slug, extra, body, status, publishedAt));

/** The JSON planOrg planned for one API path. */
function fileAt<T>(plan: OrgPlan, route: Parameters<typeof pathOf>[0]): T {
  const found = plan.files.filter((f) => pathOf(f.route) === pathOf(route));
  expect(found, pathOf(route)).toHaveLength(1);
  const file = found[0]!;
  return ("json" in file ? file.json : JSON.parse(file.bytes().toString("utf8"))) as T;
}

const ids = (items: readonly { id: string }[]) => items.map((i) => i.id);
const postIds = (posts: readonly PostHead[]) => posts.map((p) => p.meta.id);

describe("planOrg: which posts are published at `now` (D1)", () => {
  // Given in an order that is neither the expected one nor its reverse.
  const posts = [
    record("older", "2026-01-10"),
    record("draft-past", "2026-01-01", "draft"),
    record("scheduled-far", "2026-09-18"),
    record("at-now", "2026-07-01T00:00:00Z"),
    record("archived", "2026-02-01", "archived"),
    record("scheduled-soon", "2026-07-01T02:00:01+02:00"),
    record("draft-future", "2026-08-01", "draft"),
  ];
  const plan = planOrg(orgSnapshot(ORG), posts, NOW);

  test("published posts dated at or before `now` are listed; drafts, archived and scheduled posts are not", () => {
    expect(postIds(plan.posts)).toEqual(["at-now", "older"]);
    expect(ids(fileAt<ContentList>(plan, { kind: "contents", orgId: ORG }).items)).toEqual(["at-now", "older"]);
  });

  test("a post dated exactly at `now` is published; one second later is scheduled, whatever the zone it is written in", () => {
    expect(planOrg(orgSnapshot(ORG), [record("at-now", "2026-07-01T00:00:00Z")], NOW).counts.postsPublished).toBe(1);
    expect(planOrg(orgSnapshot(ORG), [record("at-now", "2026-07-01T02:00:00+02:00")], NOW).counts.postsPublished).toBe(1);
    expect(planOrg(orgSnapshot(ORG), [record("later", "2026-07-01T02:00:01+02:00")], NOW).counts).toMatchObject({
      postsPublished: 0,
      postsScheduled: 1,
    });
  });

  test("the counts say how many posts of each state were read, and the blocks and categories", () => {
    expect(plan.counts).toEqual({
      postsPublished: 2,
      postsDraft: 2,
      postsArchived: 1,
      postsScheduled: 2,
      blocksPublished: 0,
      blocksUnpublished: 0,
      categories: 0,
    });
  });

  test("nextPublishAt is the earliest scheduled instant as ISO 8601 UTC; a draft dated in the future does not count", () => {
    expect(plan.nextPublishAt).toBe("2026-07-01T00:00:01.000Z");
    const draftsOnly = planOrg(orgSnapshot(ORG), [record("d", "2026-08-01", "draft"), record("p", "2026-01-01")], NOW);
    expect(draftsOnly.nextPublishAt).toBeNull();
  });

  test("planOrg plans no file of any post: the per-post files come from renderPostFiles", () => {
    const postRoutes = plan.files.filter((f) => /\/contents\/.+/.test(pathOf(f.route)) && !("page" in f.route));
    expect(postRoutes).toEqual([]);
  });

  test("an organization with no posts lists none and has nothing scheduled", () => {
    const empty = planOrg(orgSnapshot(ORG), [], NOW);
    expect(fileAt<ContentList>(empty, { kind: "contents", orgId: ORG })).toEqual({ items: [] });
    expect(empty.posts).toEqual([]);
    expect(empty.nextPublishAt).toBeNull();
  });
});

describe("planOrg: the contents list (D2, D3)", () => {
  const posts = [
    record("same-day", "2026-03-01"),
    record("post-9", "2026-05-01T10:00:00Z"),
    record("older", "2026-01-10"),
    record("zone", "2026-03-02T01:00:00+02:00"),
    record("post-10", "2026-05-01T12:00:00+02:00"),
    record("same-day-later", "2026-03-01T12:00:00Z"),
  ];
  const plan = planOrg(orgSnapshot(ORG), posts, NOW);
  const list = fileAt<ContentList>(plan, { kind: "contents", orgId: ORG });

  test("newest publish instant first; a later time on the same day comes before the date alone", () => {
    expect(ids(list.items)).toEqual(["post-10", "post-9", "zone", "same-day-later", "same-day", "older"]);
    expect(postIds(plan.posts)).toEqual(ids(list.items));
  });

  test("equal instants, however written, are ordered by slug in code-unit order (post-10 before post-9)", () => {
    const [first, second] = plan.posts;
    expect(first!.publish.instant).toBe(second!.publish.instant);
    expect([first!.meta.slug, second!.meta.slug]).toEqual(["post-10", "post-9"]);
  });

  test("publishedAt is the date as written, even when the instant falls on the day before in UTC", () => {
    const zone = list.items.find((i) => i.id === "zone")!;
    expect(zone.publishedAt).toBe("2026-03-02");
    // 2026-03-01T23:00Z: after same-day-later (12:00Z), before post-9 (May).
    expect(ids(list.items).indexOf("zone")).toBe(ids(list.items).indexOf("same-day-later") - 1);
  });

  test("a summary carries the category's name and slug, the derived excerpt and D3's defaults, and no body", () => {
    const org = orgSnapshot(ORG, { categories: [categoryRecord("c1", "news", "News")] });
    const withCategory = record("brew", "2026-02-01", "published", ["category: news"], "## Brew day\n\nWe brew **on Mondays** [1].\n");
    const plain = record("plain", "2026-01-01");
    const items = fileAt<ContentList>(planOrg(org, [withCategory, plain], NOW), { kind: "contents", orgId: ORG }).items;
    expect(items).toEqual<ContentSummary[]>([
      {
        id: "brew",
        title: "Post brew",
        slug: "brew",
        excerpt: "Brew day We brew on Mondays.",
        categoryName: "News",
        categorySlug: "news",
        authorName: "Ada",
        publishedAt: "2026-02-01",
        featuredImage: null,
        seoMetadata: { title: "Post brew", description: "Brew day We brew on Mondays." },
        tags: [],
      },
      {
        id: "plain",
        title: "Post plain",
        slug: "plain",
        excerpt: "A body.",
        categoryName: null,
        categorySlug: null,
        authorName: "Ada",
        publishedAt: "2026-01-01",
        featuredImage: null,
        seoMetadata: { title: "Post plain", description: "A body." },
        tags: [],
      },
    ]);
  });

  test("a given excerpt, SEO members, image and tags are used as written", () => {
    const full = record("full", "2026-02-01", "published", [
      "excerpt: Written by hand.",
      "featuredImage: { url: /media/full.jpg, alt: A full cup }",
      "seoMetadata: { description: For search engines. }",
      "tags: [brewing, tips]",
    ]);
    const [item] = fileAt<ContentList>(planOrg(orgSnapshot(ORG), [full], NOW), { kind: "contents", orgId: ORG }).items;
    expect(item).toMatchObject({
      excerpt: "Written by hand.",
      featuredImage: { url: "/media/full.jpg", alt: "A full cup" },
      seoMetadata: { title: "Post full", description: "For search engines." },
      tags: ["brewing", "tips"],
    });
  });
});

describe("planOrg: blocks, page membership and categories (D2, D8)", () => {
  const org = orgSnapshot(ORG, {
    blocks: [
      blockRecord("a", { slug: "lower-a", position: 0, pages: ["home"] }),
      blockRecord("late", { position: 10, pages: ["home", "blog"] }),
      blockRecord("B", { slug: "upper-b", position: 0, pages: ["home"] }),
      blockRecord("nine", { position: 9, pages: ["blog"] }),
      blockRecord("draft-zero", { position: -5, status: "draft", pages: ["home", "promo"] }),
      blockRecord("archived", { position: 1, status: "archived", pages: ["home"] }),
      blockRecord("hero", {
        position: -1,
        fields: [
          { key: "title", type: "text", value: "Hello" },
          { key: "image", type: "image", value: { url: "/hero.jpg", alt: "A hero" } },
          { key: "clip", type: "video", value: { url: "https://video.example/1", status: "ready" } },
        ],
      }),
    ],
    // Ids in an order that agrees neither with the values nor with the insertion order.
    categories: [
      categoryRecord("cat-a", "apple", "apple", 1),
      categoryRecord("cat-z", "zebra", "Zebra", 1),
      categoryRecord("cat-s2", "same-b", "Same", 1),
      categoryRecord("cat-x", "first", "First", -2),
      categoryRecord("cat-s1", "same-a", "Same", 1),
    ],
  });
  const plan = planOrg(org, [], NOW);

  test("the block list holds the published blocks only: position ascending, then id in code-unit order (B before a)", () => {
    expect(ids(fileAt<{ items: Block[] }>(plan, { kind: "blocks", orgId: ORG }).items)).toEqual(["hero", "B", "a", "nine", "late"]);
    expect(plan.counts).toMatchObject({ blocksPublished: 5, blocksUnpublished: 2 });
  });

  test("each published block has a file by id and by slug with exactly the Block shape; unpublished blocks have none", () => {
    const hero = fileAt<Block>(plan, { kind: "block", orgId: ORG, id: "hero" });
    expect(hero).toStrictEqual({
      id: "hero",
      slug: "hero",
      name: "Block hero",
      status: "published",
      fields: [
        { key: "title", type: "text", value: "Hello" },
        { key: "image", type: "image", value: { url: "/hero.jpg", alt: "A hero" } },
        { key: "clip", type: "video", value: { url: "https://video.example/1", status: "ready" } },
      ],
    });
    expect(fileAt<Block>(plan, { kind: "blockBySlug", orgId: ORG, slug: "upper-b" }).id).toBe("B");
    const paths = plan.files.map((f) => pathOf(f.route));
    for (const id of ["draft-zero", "archived"]) {
      expect(paths).not.toContain(pathOf({ kind: "block", orgId: ORG, id }));
      expect(paths).not.toContain(pathOf({ kind: "blockBySlug", orgId: ORG, slug: id }));
    }
  });

  test("pages list the ids of their published blocks in block order; a page of unpublished blocks only is absent", () => {
    expect(plan.pages).toEqual({ home: ["B", "a", "late"], blog: ["nine", "late"] });
  });

  test("categories: position, then value in code-unit order (Zebra before apple), then id; all of them, used or not", () => {
    expect(fileAt<CategoryList>(plan, { kind: "categories", orgId: ORG })).toStrictEqual({
      items: [
        { id: "cat-x", slug: "first", value: "First" },
        { id: "cat-s1", slug: "same-a", value: "Same" },
        { id: "cat-s2", slug: "same-b", value: "Same" },
        { id: "cat-z", slug: "zebra", value: "Zebra" },
        { id: "cat-a", slug: "apple", value: "apple" },
      ],
    });
    expect(plan.counts.categories).toBe(5);
    expect([...plan.categories.keys()].sort()).toEqual(["apple", "first", "same-a", "same-b", "zebra"]);
  });

  test("the planned files: organization, categories, the block list, each block by id and slug, the contents list and its pages", () => {
    const block = (id: string, slug: string) => [pathOf({ kind: "block", orgId: ORG, id }), pathOf({ kind: "blockBySlug", orgId: ORG, slug })];
    expect(plan.files.map((f) => pathOf(f.route))).toEqual([
      pathOf({ kind: "organization", orgId: ORG }),
      pathOf({ kind: "categories", orgId: ORG }),
      pathOf({ kind: "blocks", orgId: ORG }),
      ...block("hero", "hero"),
      ...block("B", "upper-b"),
      ...block("a", "lower-a"),
      ...block("nine", "nine"),
      ...block("late", "late"),
      pathOf({ kind: "contents", orgId: ORG }),
      pathOf({ kind: "contentsPage", orgId: ORG, page: "1" }),
      // Each category has its page 1, in the order of the organization's rows.
      ...["apple", "zebra", "same-b", "first", "same-a"].map((slug) => pathOf({ kind: "categoryContentsPage", orgId: ORG, slug, page: "1" })),
    ]);
    expect(plan.orgId).toBe(ORG);
  });
});

describe("planOrg: the organization file (D4)", () => {
  test("exactly the public members: integrations as null when unset, offers in stored order, a missing link omitted", () => {
    const org = orgSnapshot(ORG, {
      name: "Acme Coffee",
      slug: "acme-coffee",
      integrations: { googleAnalyticsId: "G-ABC123", metaPixelId: null, gtmContainerId: null },
      businessDescription: "We roast on Mondays.",
      businessOffers: [
        { name: "Roast day", description: "Watch us roast.", link: "https://acme.example/roast" },
        { name: "Cupping", description: "Taste ten origins." },
      ],
      allowedOrigins: ["https://acme.example"],
    });
    expect(fileAt<Organization>(planOrg(org, [], NOW), { kind: "organization", orgId: ORG })).toStrictEqual({
      id: ORG,
      name: "Acme Coffee",
      slug: "acme-coffee",
      integrations: { googleAnalyticsId: "G-ABC123", metaPixelId: null, gtmContainerId: null },
      businessDescription: "We roast on Mondays.",
      businessOffers: [
        { name: "Roast day", description: "Watch us roast.", link: "https://acme.example/roast" },
        { name: "Cupping", description: "Taste ten origins." },
      ],
    });
  });

  test("an organization with nothing set has businessDescription \"\" and businessOffers []", () => {
    const organization = fileAt<Organization>(planOrg(orgSnapshot(ORG), [], NOW), { kind: "organization", orgId: ORG });
    expect(organization.businessDescription).toBe("");
    expect(organization.businessOffers).toEqual([]);
  });
});

describe("renderPostFiles: a published post's three files", () => {
  const categories = categoriesBySlug(orgSnapshot(ORG, { categories: [categoryRecord("c1", "news", "News")] }));
  const refs = ["references:", "  - source: Coffee Almanac", "    url: https://almanac.example/1", "    asOf: 2024", "    claim: Water is 98%"];

  test("the detail by id and by slug is the summary plus the body as written and the references", () => {
    const body = "Body with [1] and a line.\n";
    const p = record("cited", "2026-02-01", "published", ["category: news", ...refs], body);
    const files = renderPostFiles(ORG, p, body, categories);
    expect(files.map((f) => pathOf(f.route))).toEqual([
      pathOf({ kind: "content", orgId: ORG, id: "cited" }),
      pathOf({ kind: "contentBySlug", orgId: ORG, slug: "cited" }),
      pathOf({ kind: "references", orgId: ORG, id: "cited" }),
    ]);
    expect(files[1]!.json).toStrictEqual(files[0]!.json);
    expect(files[0]!.json).toMatchObject({ id: "cited", categorySlug: "news", content: body });
    const reference = { source: "Coffee Almanac", url: "https://almanac.example/1", asOf: "2024", claim: "Water is 98%" };
    expect((files[0]!.json as { references: unknown }).references).toStrictEqual([reference]);
    expect(files[2]!.json).toStrictEqual([reference]);
  });

  test("references: null in the detail without the key, [] with an empty list; the references file is [] for both", () => {
    const none = record("none", "2026-02-01");
    const empty = record("empty", "2026-02-01", "published", ["references: []"]);
    const [noneDetail, , noneRefs] = renderPostFiles(ORG, none, "x", categories);
    const [emptyDetail, , emptyRefs] = renderPostFiles(ORG, empty, "x", categories);
    expect((noneDetail!.json as { references: unknown }).references).toBeNull();
    expect((emptyDetail!.json as { references: unknown }).references).toEqual([]);
    expect(noneRefs!.json).toEqual([]);
    expect(emptyRefs!.json).toEqual([]);
  });

  test("a reference without asOf or claim has no such member, never null", () => {
    const p = record("bare", "2026-02-01", "published", ["references:", "  - { source: S, url: https://s.example/ }"]);
    expect(renderPostFiles(ORG, p, "x", categories)[2]!.json).toStrictEqual([{ source: "S", url: "https://s.example/" }]);
  });
});

describe("renderPostFiles and categoryKeyOf", () => {
  test("a published post has three files, none of which planOrg plans: its detail by id and by slug, and its references", () => {
    const org = orgSnapshot(ORG);
    const posts = [record("p1", "2026-01-01"), record("d1", "2026-01-01", "draft")];
    const plan = planOrg(org, posts, NOW);
    expect(plan.posts[0]).toBe(posts[0]);
    const files = renderPostFiles(ORG, posts[0]!, posts[0]!.body!, plan.categories);
    expect(files.map((f) => pathOf(f.route))).toEqual([
      pathOf({ kind: "content", orgId: ORG, id: "p1" }),
      pathOf({ kind: "contentBySlug", orgId: ORG, slug: "p1" }),
      pathOf({ kind: "references", orgId: ORG, id: "p1" }),
    ]);
    expect(files[1]!.json).toBe(files[0]!.json);
    const planned = new Set(plan.files.map((f) => pathOf(f.route)));
    expect(files.filter((f) => planned.has(pathOf(f.route)))).toEqual([]);
  });

  test("a post's category key changes with its category's slug or name, and is empty without a known category", () => {
    const news = categoriesBySlug(orgSnapshot(ORG, { categories: [categoryRecord("c1", "news", "News")] }));
    const renamed = categoriesBySlug(orgSnapshot(ORG, { categories: [categoryRecord("c1", "news", "Updates")] }));
    const inNews = record("n", "2026-01-01", "published", ["category: news"]);
    expect(categoryKeyOf(inNews, news)).not.toBe(categoryKeyOf(inNews, renamed));
    expect(categoryKeyOf(record("plain", "2026-01-01"), news)).toBe("");
    expect(categoryKeyOf(inNews, new Map())).toBe("");
  });
});
