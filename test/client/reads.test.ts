import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import {
  createClient,
  type Block,
  type BlockList,
  type CategoryList,
  type CdsnapClient,
  type ContentDetail,
  type ContentList,
  type ContentPage,
  type ContentSummary,
  type Organization,
  type Reference,
} from "../../src/client/index.js";
import { DEMO_ORG_ID, DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { type StartedSite, startSite } from "../fixtures/served-site.js";
import { rawGet } from "../fixtures/http.js";
import { DEMO_BLOCK_IDS } from "../fixtures/demo-answers.js";
import { buildFixture } from "../fixtures/build-fixture.js";

let live: StartedSite;
let cms: CdsnapClient;
const api = (rest: string) => `/api/organizations/${DEMO_ORG_ID}/${rest}`;
const raw = (rest: string) => rawGet(live.url, api(rest), DEMO_READ_KEY);

beforeAll(async () => {
  live = await startSite();
  cms = createClient({ baseUrl: live.url, apiKey: DEMO_READ_KEY, orgId: DEMO_ORG_ID });
});
afterAll(() => live?.stop());

describe("every read method resolves with the documented body, unchanged", () => {
  it("blocks() lists every published block in D2 order", async () => {
    const list = await cms.blocks();
    expectTypeOf(list).toEqualTypeOf<BlockList>();
    expect(list).toEqual(await raw("blocks"));
    expect(list.items.map((b) => b.id)).toEqual(DEMO_BLOCK_IDS);
    expect(list.items.every((b) => b.status === "published")).toBe(true);
  });

  it("blocks({ pages }) sends ?pages=a,b and gets the blocks of any of those pages", async () => {
    const list = await cms.blocks({ pages: ["home", "blog"] });
    expect(list).toEqual(await raw("blocks?pages=home,blog"));
    expect(list.items.map((b) => b.id)).toEqual(["blk-blog-sidebar", "blk-hero", "blk-announcement"]);
  });

  it("blocks({ pages: [] }) is no filter, and an unknown page matches nothing", async () => {
    expect((await cms.blocks({ pages: [] })).items).toHaveLength(8);
    expect(await cms.blocks({ pages: ["no-such-page"] })).toEqual({ items: [] });
  });

  it("block(id) and blockBySlug(slug) return one typed block with its fields", async () => {
    const byId = await cms.block("blk-hero");
    expectTypeOf(byId).toEqualTypeOf<Block>();
    expect(byId).toEqual(await raw("blocks/blk-hero"));
    expect(await cms.blockBySlug("home-hero")).toEqual(byId);
    const video = byId.fields.find((f) => f.type === "video");
    // The Field union narrows on `type`: value.status exists only on videos.
    if (video?.type !== "video") throw new Error("the hero block has a video field");
    expect(video.value.status).toBe("ready");
  });

  it("organization() returns the public metadata and business attributes, never a secret", async () => {
    const org = await cms.organization();
    expectTypeOf(org).toEqualTypeOf<Organization>();
    expect(org).toEqual(await raw("organization"));
    expect(org).toMatchObject({ id: "demo", name: "Northwind Coffee Roasters", slug: "northwind" });
    expect(org.integrations).toEqual({ googleAnalyticsId: "G-DEMO12345", metaPixelId: null, gtmContainerId: "GTM-DEMO1" });
    expect(JSON.stringify(org)).not.toMatch(/DEMO_SECRET|smtp|oauth/i);
  });

  it("organizationWithEtag() also returns the strong ETag the server sent", async () => {
    const { data, etag } = await cms.organizationWithEtag();
    expect(data).toEqual(await cms.organization());
    const head = await fetch(live.url + api("organization"), { headers: { "x-api-key": DEMO_READ_KEY } });
    expect(etag).toBe(head.headers.get("etag"));
    expect(etag).toMatch(/^"[^"]+"$/);
  });

  it("contents() lists summaries newest first, without a body", async () => {
    const list = await cms.contents();
    expectTypeOf(list).toEqualTypeOf<ContentList>();
    expect(list).toEqual(await raw("contents"));
    expect(list.items.length).toBeGreaterThan(0);
    const dates = list.items.map((p: ContentSummary) => p.publishedAt);
    expect(dates).toEqual([...dates].sort().reverse());
    expect(list.items.every((p) => !("content" in p))).toBe(true);
  });

  it("content(id) and contentBySlug(slug) return the detail with the markdown body and references", async () => {
    const post = await cms.content("post-0002");
    expectTypeOf(post).toEqualTypeOf<ContentDetail>();
    expect(post).toEqual(await raw("contents/post-0002"));
    expect(await cms.contentBySlug("sourcing-ethiopian-yirgacheffe")).toEqual(post);
    expect(post.content).toContain("Gedeo");
    expect(post.references?.[0]).toMatchObject({ source: "Coffee Producers Review", asOf: "2024" });
  });

  it("references(id) returns the bare array, [] for a post without stored references", async () => {
    const refs = await cms.references("post-0002");
    expectTypeOf(refs).toEqualTypeOf<Reference[]>();
    expect(refs).toEqual(await raw("contents/post-0002/references"));
    expect(refs.map((r) => r.source)).toEqual(["Coffee Producers Review", "Green Coffee Market Monitor"]);
    expect((await cms.content("post-0001")).references).toBeNull();
    expect(await cms.references("post-0001")).toEqual([]);
  });

  it("categories() lists the taxonomy; posts filter by categorySlug on the client", async () => {
    const list = await cms.categories();
    expectTypeOf(list).toEqualTypeOf<CategoryList>();
    expect(list).toEqual(await raw("categories"));
    expect(list.items.map((c) => c.slug)).toEqual(["brewing", "roasting", "origins", "news", "equipment"]);
    const origins = (await cms.contents()).items.filter((p) => p.categorySlug === "origins");
    expect(origins.map((p) => p.id)).toContain("post-0002");
  });

  it("a baseUrl with a trailing slash works the same", async () => {
    const slashed = createClient({ baseUrl: `${live.url}/`, apiKey: DEMO_READ_KEY, orgId: DEMO_ORG_ID });
    expect(await slashed.categories()).toEqual(await cms.categories());
  });
});

describe("pages of the lists, on a tree built with 4 posts a page", () => {
  beforeAll(async () => {
    // The server follows the live tree: the rebuild is what it serves next.
    await buildFixture(live, { pageSize: 4 });
  });

  it("contentsPage(n) walks the whole list in slices, meta.pagination saying where each lies", async () => {
    const all = (await cms.contents()).items;
    const first = await cms.contentsPage(1);
    expectTypeOf(first).toEqualTypeOf<ContentPage>();
    expect(first).toEqual(await raw("contents/page/1"));
    const pages = Math.ceil(all.length / 4);
    expect(first.meta.pagination).toEqual({ page: 1, limit: 4, pages, total: all.length, next: 2, prev: null });
    const walked: ContentSummary[] = [];
    for (let page: number | null = 1; page !== null; ) {
      const answer: ContentPage = await cms.contentsPage(page);
      walked.push(...answer.items);
      page = answer.meta.pagination.next;
    }
    expect(walked).toEqual(all);
  });

  it("categoryContentsPage(slug, n) pages one category's posts", async () => {
    const origins = (await cms.contents()).items.filter((p) => p.categorySlug === "origins");
    const page = await cms.categoryContentsPage("origins", 1);
    expect(page.items).toEqual(origins.slice(0, 4));
    expect(page.meta.pagination.total).toBe(origins.length);
    expect(await cms.categoryContentsPage("equipment", 1)).toEqual({ items: [], meta: { pagination: { page: 1, limit: 4, pages: 1, total: 0, next: null, prev: null } } });
  });

  it("a page past the last, page 0, or a category that does not exist is not_found (404)", async () => {
    const { pages } = (await cms.contentsPage(1)).meta.pagination;
    for (const call of [() => cms.contentsPage(pages + 1), () => cms.contentsPage(0), () => cms.categoryContentsPage("no-such-category", 1)]) {
      await expect(call()).rejects.toMatchObject({ name: "CdsnapApiError", status: 404, code: "not_found" });
    }
  });

  it("a page's Cache-Tag names that page, so a CDN purges it alone", async () => {
    const answer = await cms.withMeta.contentsPage(2);
    expect(answer.meta.cacheTags).toEqual(["org:demo", "contentsPage:demo/2"]);
  });
});

