/**
 * The demo organization built once, through the real database and the real
 * markdown files, then read back file by file: what the website frontends get.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { fileOf, parseApiPath, pathOf, routeOfFile, type Route } from "../../src/api-paths.js";
import { DEMO_SECRET_VALUES } from "../../src/db/demo-seed.js";
import {
  blockListSchema,
  blockSchema,
  categoryListSchema,
  contentDetailSchema,
  contentListSchema,
  contentPageSchema,
  organizationSchema,
  referenceListSchema,
  type Block,
  type ContentDetail,
  type ContentList,
  type Organization,
  type Reference,
} from "../../src/model/api.js";
import type { BuildReport } from "../../src/report.js";
import { buildFixture, type Fixture, makeFixture, removeDir } from "../fixtures/build-fixture.js";
import { listFiles, liveGenerationOf, readPages, readTreeJson, stateDirOf } from "../fixtures/tree.js";
import { DEMO_BLOCK_IDS } from "../fixtures/demo-answers.js";

const ORG = "demo";
let fx: Fixture;
let report: BuildReport;
let files: string[];

const file = (route: Route) => fileOf(route);
const read = <T>(route: Route) => readTreeJson<T>(fx.out, file(route));
const detail = (id: string) => read<ContentDetail>({ kind: "content", orgId: ORG, id });
const refs = (id: string) => read<Reference[]>({ kind: "references", orgId: ORG, id });
const has = (route: Route) => files.includes(file(route));

beforeAll(async () => {
  fx = await makeFixture({ demo: true });
  report = await buildFixture(fx);
  files = await listFiles(fx.out);
});

afterAll(async () => {
  await removeDir(fx.dir);
});

describe("D1: only published content and blocks are output", () => {
  const hidden = [
    { id: "post-0016", slug: "anniversary-blend", why: "draft" },
    { id: "post-0017", slug: "summer-sale-2025", why: "archived" },
    { id: "post-0018", slug: "centennial-reserve", why: "scheduled in 2099" },
    { id: "post-0014", slug: "kenya-aa-nyeri", why: "scheduled after the build instant" },
  ];

  test.each(hidden)("the $why post $id is absent from the list, by id, by slug and references", async ({ id, slug }) => {
    const list = await read<ContentList>({ kind: "contents", orgId: ORG });
    expect(list.items.map((i) => i.id)).not.toContain(id);
    expect(list.items.map((i) => i.slug)).not.toContain(slug);
    expect(has({ kind: "content", orgId: ORG, id })).toBe(false);
    expect(has({ kind: "contentBySlug", orgId: ORG, slug })).toBe(false);
    expect(has({ kind: "references", orgId: ORG, id })).toBe(false);
  });

  test("no byte of the tree carries a draft, archived or scheduled post or an unpublished block", async () => {
    const canaries = [
      "DRAFT-CANARY-7f3a",
      "SCHEDULED-CANARY-2c9d",
      "ARCHIVED-CANARY-5b8e",
      "DRAFT-BLOCK-CANARY-4e1d",
      "ARCHIVED-BLOCK-CANARY-9a6c",
    ];
    // The tree and the state beside it (page membership, manifest): everything cdsnap writes.
    for (const root of [fx.out, stateDirOf(fx.out)]) {
      for (const rel of await listFiles(root)) {
        const bytes = await readFile(path.join(root, rel), "latin1");
        for (const canary of canaries) expect(bytes.includes(canary), `${canary} in ${rel}`).toBe(false);
      }
    }
  });

  test("unpublished blocks are absent from the list, by id and by slug", async () => {
    const list = await read<{ items: Block[] }>({ kind: "blocks", orgId: ORG });
    for (const [id, slug] of [
      ["blk-holiday-promo", "holiday-promo"],
      ["blk-summer-sale", "summer-sale-banner"],
    ] as const) {
      expect(list.items.map((b) => b.id)).not.toContain(id);
      expect(has({ kind: "block", orgId: ORG, id })).toBe(false);
      expect(has({ kind: "blockBySlug", orgId: ORG, slug })).toBe(false);
    }
  });

  test("every block anywhere in the tree has status published", async () => {
    const blockFiles = files.filter((f) => routeOfFile(f)?.kind === "block" || routeOfFile(f)?.kind === "blockBySlug");
    expect(blockFiles.length).toBeGreaterThan(0);
    for (const f of blockFiles) expect((await readTreeJson<Block>(fx.out, f)).status).toBe("published");
    for (const f of files.filter((f) => routeOfFile(f)?.kind === "blocks")) {
      for (const b of (await readTreeJson<{ items: Block[] }>(fx.out, f)).items) expect(b.status).toBe("published");
    }
  });

  test("every post published before the build instant is listed", async () => {
    const list = await read<ContentList>({ kind: "contents", orgId: ORG });
    expect(list.items).toHaveLength(13);
    expect(list.items.map((i) => i.id)).toContain("post-0010");
  });
});

describe("D2: deterministic orderings", () => {
  test("contents are newest first by full instant, ties broken by slug", async () => {
    const list = await read<ContentList>({ kind: "contents", orgId: ORG });
    expect(list.items.map((i) => i.id)).toEqual([
      "post-0010", // 2026-05-31T23:30Z (written 2026-06-01T01:30+02:00)
      "post-0013", // 2026-05-02T09:30Z
      "post-0012", // 2026-04-22
      "post-0011", // 2026-03-14
      "post-0009", // 2025-12-01
      "post-0008", // 2025-10-03T14:00Z
      "post-0007", // 2025-08-14, slug cold-brew-at-home
      "post-0006", // 2025-08-14, slug japanese-style-iced-coffee
      "post-0004",
      "post-0003",
      "post-0002",
      "post-0005",
      "post-0001",
    ]);
  });

  test("blocks are by position, then id", async () => {
    const list = await read<{ items: Block[] }>({ kind: "blocks", orgId: ORG });
    expect(list.items.map((b) => b.id)).toEqual(DEMO_BLOCK_IDS);
  });

  test("categories are by position, then display value, then id", async () => {
    const list = await read<{ items: { id: string }[] }>({ kind: "categories", orgId: ORG });
    expect(list.items.map((c) => c.id)).toEqual(["cat-brewing", "cat-roasting", "cat-origins", "cat-news", "cat-equipment"]);
  });

  test("fields keep their stored position order", async () => {
    const hero = await read<Block>({ kind: "block", orgId: ORG, id: "blk-hero" });
    expect(hero.fields.map((f) => f.key)).toEqual(["headline", "subheadline", "background", "intro_video"]);
  });

  test("offers keep their stored order", async () => {
    const org = await read<Organization>({ kind: "organization", orgId: ORG });
    expect(org.businessOffers.map((o) => o.name)).toEqual(["Coffee subscription", "Wholesale for cafés", "Home brewing class"]);
  });
});

describe("D3: absent values", () => {
  test("unconfigured integrations are null members, never missing", async () => {
    const demo = await read<Organization>({ kind: "organization", orgId: ORG });
    expect(demo.integrations).toEqual({ googleAnalyticsId: "G-DEMO12345", metaPixelId: null, gtmContainerId: "GTM-DEMO1" });
    const harbor = await read<Organization>({ kind: "organization", orgId: "harbor" });
    expect(harbor.integrations).toEqual({ googleAnalyticsId: null, metaPixelId: null, gtmContainerId: null });
  });

  test("a post with no category has null categoryName and categorySlug", async () => {
    const post = await detail("post-0012");
    expect(post.categoryName).toBeNull();
    expect(post.categorySlug).toBeNull();
    const list = await read<ContentList>({ kind: "contents", orgId: ORG });
    const summary = list.items.find((i) => i.id === "post-0012");
    expect(summary).toMatchObject({ categoryName: null, categorySlug: null });
    expect(await detail("post-0004")).toMatchObject({ categoryName: "Roast Lab", categorySlug: "roasting" });
  });

  test("references: null without the key, [] for an empty list, the list otherwise", async () => {
    expect((await detail("post-0012")).references).toBeNull();
    expect(await refs("post-0012")).toEqual([]);
    expect((await detail("post-0008")).references).toEqual([]);
    expect(await refs("post-0008")).toEqual([]);
    const withRefs = await detail("post-0004");
    expect(withRefs.references).toHaveLength(3);
    expect(await refs("post-0004")).toEqual(withRefs.references);
  });

  test("optional reference members are omitted when absent, never null", async () => {
    const [first, second] = (await detail("post-0009")).references ?? [];
    expect(first).toEqual({
      source: "Andean Coffee Bulletin",
      url: "https://andean-bulletin.example.org/2025/huila-main-harvest",
      asOf: "2025",
      claim: "The main harvest in Huila started about three weeks later than usual.",
    });
    expect(second).toEqual({ source: "Northwind Sourcing Notes", url: "https://northwind.example/sourcing/colombia-2025" });
    expect(Object.keys(second ?? {})).toEqual(["source", "url"]);
  });

  test("a numeric asOf (asOf: 2024) is the string \"2024\"", async () => {
    const [first] = await refs("post-0002");
    expect(first?.asOf).toBe("2024");
  });

  test("an empty excerpt counts as absent and is derived from the body", async () => {
    const post = await detail("post-0009");
    expect(post.excerpt).not.toBe("");
    expect(post.excerpt.startsWith("This year's main harvest in Huila arrived late.")).toBe(true);
    // The [1] citation marker of the body is not part of the excerpt.
    expect(post.excerpt).toContain("by about three weeks, and the first lots");
    expect(post.excerpt).not.toMatch(/\[\d+\]/);
  });

  test("a derived excerpt is plain text of the body, at most 200 code points, cut with …", async () => {
    const post = await detail("post-0012");
    expect(post.excerpt.startsWith("Every Thursday morning, the whole team gathers around the cupping table.")).toBe(true);
    expect([...post.excerpt].length).toBeLessThanOrEqual(200);
    expect(post.excerpt.endsWith("…")).toBe(true);
    expect(post.excerpt).not.toMatch(/[#*_`]/);
    // The seo description defaults to that same excerpt.
    expect(post.seoMetadata).toEqual({ title: "Notes from the cupping table", description: post.excerpt });
  });

  test("a given excerpt is used as written", async () => {
    expect((await detail("post-0001")).excerpt).toBe(
      "Why a small roastery on the waterfront is starting a blog, and what you can expect to read here every month.",
    );
  });

  test("seoMetadata members default to title and excerpt one by one", async () => {
    const onlyTitle = await detail("post-0002");
    expect(onlyTitle.seoMetadata).toEqual({ title: "Sourcing Ethiopian Yirgacheffe coffee", description: onlyTitle.excerpt });
    const onlyDescription = await detail("post-0007");
    expect(onlyDescription.seoMetadata).toEqual({
      title: "Cold brew at home, the easy way",
      description: "A simple overnight cold brew recipe from the baristas at Northwind Coffee Roasters.",
    });
    const none = await detail("post-0005");
    expect(none.seoMetadata).toEqual({ title: none.title, description: none.excerpt });
  });

  test("featuredImage is null and tags [] when the post has none", async () => {
    const post = await detail("post-0012");
    expect(post.featuredImage).toBeNull();
    expect(post.tags).toEqual([]);
    expect((await detail("post-0005")).featuredImage).toBeNull();
  });

  test("publishedAt is the calendar date written in the source, never shifted by its zone", async () => {
    expect((await detail("post-0010")).publishedAt).toBe("2026-06-01");
    expect((await detail("post-0008")).publishedAt).toBe("2025-10-03");
    expect((await detail("post-0006")).publishedAt).toBe("2025-08-14");
  });

  test("content is the markdown body exactly as written in the file", async () => {
    const source = await readFile(path.join(fx.content, "demo/2026/notes-from-the-cupping-table.md"), "utf8");
    const body = source.slice(source.indexOf("\n---\n") + "\n---\n".length);
    expect((await detail("post-0012")).content).toBe(body);
  });
});

describe("D4: the organization response", () => {
  test("has exactly id, name, slug, integrations, businessDescription, businessOffers", async () => {
    for (const orgId of ["demo", "harbor"]) {
      const org = await read<Record<string, unknown>>({ kind: "organization", orgId });
      expect(Object.keys(org).sort()).toEqual(
        ["businessDescription", "businessOffers", "id", "integrations", "name", "slug"].sort(),
      );
    }
    const demo = await read<Organization>({ kind: "organization", orgId: ORG });
    expect(demo).toMatchObject({ id: "demo", name: "Northwind Coffee Roasters", slug: "northwind" });
    expect(demo.businessDescription.startsWith("Northwind Coffee Roasters is a small-batch")).toBe(true);
  });

  test("an organization with nothing set has businessDescription \"\" and businessOffers []", async () => {
    const harbor = await read<Organization>({ kind: "organization", orgId: "harbor" });
    expect(harbor.businessDescription).toBe("");
    expect(harbor.businessOffers).toEqual([]);
  });

  test("an offer without a link has no link member", async () => {
    const org = await read<Organization>({ kind: "organization", orgId: ORG });
    const noLink = org.businessOffers[2];
    expect(noLink).toEqual({
      name: "Home brewing class",
      description: "A two-hour hands-on class at our harbourside café covering pour-over, AeroPress and water.",
    });
    expect(Object.hasOwn(noLink ?? {}, "link")).toBe(false);
    expect(org.businessOffers[0]?.link).toBe("https://northwind.example/subscribe");
  });
});

describe("D8: page membership data", () => {
  test("lists only published blocks per page, in D2 order", async () => {
    const gen = await liveGenerationOf(fx.out);
    expect(await readPages(gen, ORG)).toEqual({
      about: ["blk-about-story", "blk-team-video"],
      blog: ["blk-blog-sidebar", "blk-announcement"],
      home: ["blk-hero", "blk-announcement"],
      pricing: ["blk-pricing-faq", "blk-pricing-table"],
    });
    expect(await readPages(gen, "harbor")).toEqual({ home: ["blk-hero"], menu: ["blk-tea-menu"] });
  });

  test("a draft or archived block attached to a page is not a member of it", async () => {
    const pages = (await readPages(await liveGenerationOf(fx.out), ORG)) ?? {};
    const members = Object.values(pages).flat();
    expect(members).not.toContain("blk-holiday-promo");
    expect(members).not.toContain("blk-summer-sale");
  });

  test("the Block shape carries no page membership", async () => {
    const hero = await read<Record<string, unknown>>({ kind: "block", orgId: ORG, id: "blk-hero" });
    expect(Object.keys(hero).sort()).toEqual(["fields", "id", "name", "slug", "status"]);
  });
});

describe("response shapes and paths", () => {
  test("every file parses through the strict schema of its route", async () => {
    const schemaOf = {
      blocks: blockListSchema,
      block: blockSchema,
      blockBySlug: blockSchema,
      organization: organizationSchema,
      contents: contentListSchema,
      contentsPage: contentPageSchema,
      categoryContentsPage: contentPageSchema,
      content: contentDetailSchema,
      contentBySlug: contentDetailSchema,
      references: referenceListSchema,
      categories: categoryListSchema,
    } as const;
    for (const f of files) {
      const route = routeOfFile(f);
      if (!route || route.kind === "businessDescription" || route.kind === "businessOffers") {
        throw new Error(`${f} answers no GET route`);
      }
      const result = schemaOf[route.kind].safeParse(await readTreeJson(fx.out, f));
      expect(result.success, `${f}: ${result.error?.message}`).toBe(true);
    }
  });

  test("every file maps to one API path and back (parseApiPath, fileOf, routeOfFile)", () => {
    for (const f of files) {
      const route = routeOfFile(f);
      expect(route, f).not.toBeNull();
      const apiPath = pathOf(route!);
      expect(parseApiPath(apiPath)).toEqual(route);
      expect(fileOf(route!)).toBe(f);
    }
  });

  test("by id and by slug answer the same detail", async () => {
    const list = await read<ContentList>({ kind: "contents", orgId: ORG });
    for (const item of list.items) {
      const byId = await readFile(path.join(fx.out, file({ kind: "content", orgId: ORG, id: item.id })));
      const bySlug = await readFile(path.join(fx.out, file({ kind: "contentBySlug", orgId: ORG, slug: item.slug })));
      expect(bySlug.equals(byId)).toBe(true);
      const { content: _c, references: _r, ...summary } = JSON.parse(byId.toString("utf8")) as ContentDetail;
      expect(item).toEqual(summary);
    }
  });

  test("the tree holds exactly the files of the published items, nothing else", () => {
    const expected = new Set<string>();
    const add = (r: Route) => expected.add(fileOf(r));
    for (const orgId of ["demo", "harbor"]) {
      for (const kind of ["blocks", "organization", "contents", "categories"] as const) add({ kind, orgId });
      // 13 posts at most, 20 a page: one page of each list, every category's too, even one no post is in.
      add({ kind: "contentsPage", orgId, page: "1" });
    }
    for (const slug of ["brewing", "origins", "roasting", "news", "equipment"]) add({ kind: "categoryContentsPage", orgId: ORG, slug, page: "1" });
    for (const slug of ["news", "teaware"]) add({ kind: "categoryContentsPage", orgId: "harbor", slug, page: "1" });
    for (const [id, slug] of [
      ["blk-blog-sidebar", "blog-sidebar"],
      ["blk-hero", "home-hero"],
      ["blk-about-story", "roastery-story"],
      ["blk-announcement", "announcement-bar"],
      ["blk-pricing-faq", "pricing-faq"],
      ["blk-pricing-table", "subscription-plans"],
      ["blk-team-video", "meet-the-roasters"],
      ["blk-newsletter", "newsletter-signup"],
    ] as const) {
      add({ kind: "block", orgId: ORG, id });
      add({ kind: "blockBySlug", orgId: ORG, slug });
    }
    add({ kind: "block", orgId: "harbor", id: "blk-hero" });
    add({ kind: "blockBySlug", orgId: "harbor", slug: "home-hero" });
    add({ kind: "block", orgId: "harbor", id: "blk-tea-menu" });
    add({ kind: "blockBySlug", orgId: "harbor", slug: "tea-menu" });
    for (let n = 1; n <= 13; n++) {
      const id = `post-${String(n).padStart(4, "0")}`;
      add({ kind: "content", orgId: ORG, id });
      add({ kind: "references", orgId: ORG, id });
    }
    expect(files.filter((f) => !expected.has(f) && routeOfFile(f)?.kind !== "contentBySlug")).toEqual([]);
    expect(files.filter((f) => routeOfFile(f)?.kind === "contentBySlug")).toHaveLength(13);
    expect([...expected].filter((f) => !files.includes(f))).toEqual([]);
  });
});

describe("secrets", () => {
  test("no secret value appears anywhere in the output, raw or JSON-escaped", async () => {
    expect(DEMO_SECRET_VALUES.length).toBeGreaterThan(0);
    const needles = DEMO_SECRET_VALUES.flatMap((v) => [v, JSON.stringify(v).slice(1, -1)]);
    // A distinctive fragment of each, in case a renderer truncated or re-escaped it.
    const fragments = ["DEMO_SECRET", "DEMO-smtp", "DEMO-oauth", "DEMO-capi", "HARBOR_SECRET", "HARBOR-smtp", "HARBOR-oauth"];
    let scanned = 0;
    for (const root of [fx.out, stateDirOf(fx.out)]) {
      for (const rel of await listFiles(root)) {
        const text = await readFile(path.join(root, rel), "utf8");
        scanned++;
        for (const needle of [...needles, ...fragments]) expect(text.includes(needle), `${needle} in ${rel}`).toBe(false);
      }
    }
    expect(scanned).toBeGreaterThan(files.length);
  });
});

describe("D12: the build report", () => {
  test("counts published, draft, archived and scheduled posts and blocks per organization", () => {
    const demo = report.orgs.find((o) => o.orgId === ORG);
    expect(demo).toMatchObject({
      postsPublished: 13,
      postsDraft: 1,
      postsArchived: 1,
      postsScheduled: 3,
      blocksPublished: 8,
      blocksUnpublished: 2,
      categories: 5,
    });
    const harbor = report.orgs.find((o) => o.orgId === "harbor");
    expect(harbor).toMatchObject({ postsPublished: 0, postsScheduled: 0, blocksPublished: 2, blocksUnpublished: 0 });
  });

  test("counts the files written on a first build", () => {
    const demo = report.orgs.find((o) => o.orgId === ORG);
    const demoFiles = files.filter((f) => f.startsWith("api/organizations/demo/")).length;
    expect(demo).toMatchObject({ filesWritten: demoFiles, filesUnchanged: 0, filesRemoved: 0 });
    expect(report.changed).toBe(true);
  });

  test("nextPublishAt is the earliest future publish instant, per organization and overall", () => {
    expect(report.nextPublishAt).toBe("2026-09-18T00:00:00.000Z");
    expect(report.orgs.find((o) => o.orgId === ORG)?.nextPublishAt).toBe("2026-09-18T00:00:00.000Z");
    expect(report.orgs.find((o) => o.orgId === "harbor")?.nextPublishAt).toBeNull();
  });
});
