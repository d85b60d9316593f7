/**
 * The pages of the lists (`/contents/page/{n}`, `/categories/{slug}/contents/page/{n}`),
 * built from real markdown files and a real SQLite file, judged by reading the
 * tree back: every page is the exact slice of the list it claims, page 1
 * always exists, a rebuild rewrites only the pages whose bytes change, and
 * the page size a build was given stays with the tree.
 */
import fc from "fast-check";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileOf, pathOf, type Route } from "../../src/api-paths.js";
import { UsageError } from "../../src/errors.js";
import type { ContentList, ContentPage, CategoryList } from "../../src/model/api.js";
import { buildFixture, makeFixture, removeFixture, type Fixture } from "../fixtures/build-fixture.js";
import { buildArgs, runCli } from "../fixtures/cli.js";
import { insertCategory, insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { listFiles, readTreeJson } from "../fixtures/tree.js";

const ORG = "acme";
const CATEGORIES = ["news", "guides", "empty"] as const;

const contentsPage = (page: number): Route => ({ kind: "contentsPage", orgId: ORG, page: String(page) });
const categoryPage = (slug: string, page: number): Route => ({ kind: "categoryContentsPage", orgId: ORG, slug, page: String(page) });
const PAGE_FILE = /^api\/organizations\/acme\/(?:categories\/([a-z0-9-]+)\/)?contents\/page\/([0-9]+)\.json$/;

interface PostSpec {
  n: number;
  status: "published" | "draft" | "scheduled";
  day: number;
  category: (typeof CATEGORIES)[number] | null;
}

/** Writes the posts as an author would, replacing whatever the content folder held. */
async function writePosts(fx: Fixture, posts: readonly PostSpec[]): Promise<void> {
  await rm(fx.content, { recursive: true, force: true });
  await mkdir(fx.content);
  for (const p of posts) {
    // DEMO_NOW is in 2026: a post of 2099 is scheduled, one of 2025 published.
    const publishedAt = p.status === "scheduled" ? `2099-01-${String(p.day).padStart(2, "0")}` : `2025-03-${String(p.day).padStart(2, "0")}`;
    const meta = postMeta(`p${p.n}`, { status: p.status === "draft" ? "draft" : "published", publishedAt, ...(p.category ? { category: p.category } : {}) });
    await writePost(fx.content, `${ORG}/p${p.n}.md`, meta, `Body of post ${p.n}.\n`);
  }
}

/** Every page file of the tree, by its list (`""` for the contents list, else the category's slug) and number. */
async function pageFiles(fx: Fixture): Promise<Map<string, Map<number, ContentPage>>> {
  const out = new Map<string, Map<number, ContentPage>>();
  for (const rel of await listFiles(fx.out, { followLinks: true })) {
    const match = PAGE_FILE.exec(rel);
    if (!match) continue;
    const list = out.get(match[1] ?? "") ?? new Map<number, ContentPage>();
    list.set(Number(match[2]), await readTreeJson<ContentPage>(fx.out, rel));
    out.set(match[1] ?? "", list);
  }
  return out;
}

/** The pages a list of `items` must have at `limit` a page, as an independent oracle writes them. */
function expectedPages<T>(items: readonly T[], limit: number): Map<number, { items: T[]; meta: { pagination: object } }> {
  const pages = Math.max(1, Math.ceil(items.length / limit));
  const out = new Map<number, { items: T[]; meta: { pagination: object } }>();
  for (let page = 1; page <= pages; page++) {
    const pagination = { page, limit, pages, total: items.length, next: page < pages ? page + 1 : null, prev: page > 1 ? page - 1 : null };
    out.set(page, { items: items.slice((page - 1) * limit, page * limit), meta: { pagination } });
  }
  return out;
}

/** Holds every page of the built tree to the slices of its contents list; returns the pages found. */
async function expectPagesAreSlices(fx: Fixture, limit: number) {
  const list = await readTreeJson<ContentList>(fx.out, fileOf({ kind: "contents", orgId: ORG }));
  const categories = await readTreeJson<CategoryList>(fx.out, fileOf({ kind: "categories", orgId: ORG }));
  const found = await pageFiles(fx);
  const expected = new Map([["", expectedPages(list.items, limit)]]);
  for (const { slug } of categories.items) expected.set(slug, expectedPages(list.items.filter((item) => item.categorySlug === slug), limit));
  expect([...found.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [key, pages] of expected) expect(found.get(key), `the pages of "${key}"`).toEqual(pages);
  return { list, found };
}

describe("pages of the lists", () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await makeFixture();
    withDb(fx.db, (db) => {
      insertOrg(db, { id: ORG, slug: ORG });
      CATEGORIES.forEach((slug, position) => insertCategory(db, ORG, { id: `cat-${slug}`, slug, value: slug, position }));
    });
  });
  afterAll(() => removeFixture(fx));

  it("every page is the exact slice of its list, whatever the posts and the page size (property, rebuilt in place)", async () => {
    const postArb = fc.record({
      status: fc.constantFrom("published", "published", "published", "draft", "scheduled"),
      // Few days: many posts share a date, so the slug decides their order (D2).
      day: fc.integer({ min: 1, max: 6 }),
      category: fc.constantFrom("news", "guides", null),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(postArb, { maxLength: 40 }), fc.integer({ min: 1, max: 12 }), async (posts, limit) => {
        await writePosts(fx, posts.map((p, n) => ({ ...p, n }) as PostSpec));
        await buildFixture(fx, { pageSize: limit });
        const { list } = await expectPagesAreSlices(fx, limit);
        expect(list.items).toHaveLength(posts.filter((p) => p.status === "published").length);
      }),
      { numRuns: 25 },
    );
  });

  it.each([
    [0, [0]],
    [1, [1]],
    [5, [5]],
    [6, [5, 1]],
  ])("with %i published posts and 5 a page, the pages hold %j items", async (count, sizes) => {
    await writePosts(fx, Array.from({ length: count }, (_, n) => ({ n, status: "published", day: (n % 6) + 1, category: "news" }) as PostSpec));
    await buildFixture(fx, { pageSize: 5 });
    const { found } = await expectPagesAreSlices(fx, 5);
    expect([...found.get("")!.entries()].sort(([a], [b]) => a - b).map(([, page]) => page.items.length)).toEqual(sizes);
    expect(found.get("news")!.size).toBe(sizes.length);
    // A category no post is in still has its page 1, empty.
    expect(found.get("empty")).toEqual(expectedPages([], 5));
  });
});

describe("a rebuild rewrites only the pages whose bytes change", () => {
  let fx: Fixture;
  // 30 posts, one a day: p0 is the oldest, so list position i holds p(29-i); at 5 a page, p17 is on page 3.
  const posts: PostSpec[] = Array.from({ length: 30 }, (_, n) => ({ n, status: "published", day: 0, category: n % 2 === 0 ? "news" : "guides" }));
  const write = (specs: readonly PostSpec[], retitle?: number) =>
    Promise.all(
      specs.map((p) =>
        writePost(
          fx.content,
          `${ORG}/p${p.n}.md`,
          postMeta(`p${p.n}`, {
            publishedAt: new Date(Date.UTC(2025, 0, 1 + p.n)).toISOString().slice(0, 10),
            category: p.category,
            ...(p.n === retitle ? { title: "Retitled" } : {}),
          }),
        ),
      ),
    );
  beforeAll(async () => {
    fx = await makeFixture();
    withDb(fx.db, (db) => {
      insertOrg(db, { id: ORG, slug: ORG });
      for (const slug of ["news", "guides"]) insertCategory(db, ORG, { id: `cat-${slug}`, slug, value: slug, position: 0 });
    });
    await write(posts);
    await buildFixture(fx, { pageSize: 5 });
  });
  afterAll(() => removeFixture(fx));

  it("an edited title rewrites its post, the list, and the one page of each list that holds it", async () => {
    await write([posts[17]!], 17);
    const report = await buildFixture(fx);
    // p17 is at list position 12 (page 3); among the guides (odd posts, newest first) at position 6 (page 2).
    expect(report.changedPaths.changed.sort()).toEqual(
      [
        pathOf({ kind: "contents", orgId: ORG }),
        pathOf(contentsPage(3)),
        pathOf(categoryPage("guides", 2)),
        pathOf({ kind: "content", orgId: ORG, id: "p17" }),
        pathOf({ kind: "contentBySlug", orgId: ORG, slug: "p17" }),
      ].sort(),
    );
    expect(report.changedPaths.added).toEqual([]);
    expect(report.changedPaths.removed).toEqual([]);
    // The tags a CDN purges name those pages alone.
    expect(report.changedTags).toEqual(expect.arrayContaining(["contentsPage:acme/3", "categoryContentsPage:acme/guides/2"]));
    expect(report.changedTags.filter((tag) => tag.includes("Page:"))).toHaveLength(2);
    await expectPagesAreSlices(fx, 5);
  });

  it("a post removed shifts the pages after it; the last page goes when it empties", async () => {
    await rm(path.join(fx.content, ORG, "p29.md"));
    const first = await buildFixture(fx);
    // The newest post goes: every contents page moves up by one item (29 items still make 6 pages).
    expect(first.changedPaths.changed.filter((p) => p.startsWith(`/api/organizations/${ORG}/contents/page/`)).sort()).toEqual([1, 2, 3, 4, 5, 6].map((n) => pathOf(contentsPage(n))).sort());
    expect(first.changedPaths.removed.sort()).toEqual(
      [
        pathOf({ kind: "content", orgId: ORG, id: "p29" }),
        pathOf({ kind: "contentBySlug", orgId: ORG, slug: "p29" }),
        pathOf({ kind: "references", orgId: ORG, id: "p29" }),
      ].sort(),
    );
    // The news posts (even) did not move: none of their pages changed.
    expect(first.changedPaths.changed.filter((p) => p.includes("/categories/news/"))).toEqual([]);
    await expectPagesAreSlices(fx, 5);

    for (const n of [25, 26, 27, 28]) await rm(path.join(fx.content, ORG, `p${n}.md`));
    const second = await buildFixture(fx);
    expect(second.changedPaths.removed.filter((p) => p.includes("/page/"))).toEqual([pathOf(contentsPage(6))]);
    await expectPagesAreSlices(fx, 5);
  });

  it("a build without a page size keeps the tree's; another size re-cuts every page and removes those past the new last", async () => {
    await buildFixture(fx);
    expect((await readTreeJson<ContentPage>(fx.out, fileOf(contentsPage(1)))).meta.pagination.limit).toBe(5);
    const report = await buildFixture(fx, { pageSize: 10 });
    await expectPagesAreSlices(fx, 10);
    expect(report.changedPaths.removed.filter((p) => p.includes("/page/")).sort()).toEqual(
      [pathOf(contentsPage(4)), pathOf(contentsPage(5)), pathOf(categoryPage("news", 3)), pathOf(categoryPage("guides", 3))].sort(),
    );
    await buildFixture(fx);
    expect((await readTreeJson<ContentPage>(fx.out, fileOf(contentsPage(1)))).meta.pagination.limit).toBe(10);
  });
});

describe("the page size is bounded", () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await makeFixture();
    withDb(fx.db, (db) => insertOrg(db, { id: ORG, slug: ORG }));
  });
  afterAll(() => removeFixture(fx));

  it.each([0, 1001, 2.5])("the library refuses %d with a usage error, before anything is written", async (pageSize) => {
    await expect(buildFixture(fx, { pageSize })).rejects.toThrow(UsageError);
    await expect(listFiles(fx.out)).rejects.toThrow();
  });

  it("the command line refuses --page-size 0 with exit 2 and says the bounds", async () => {
    const result = await runCli(buildArgs(fx, "--page-size", "0"));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--page-size must be a whole number from 1 to 1000");
  });

  it("the command line takes --page-size", async () => {
    await writePost(fx.content, `${ORG}/one.md`, postMeta("one", { publishedAt: "2025-01-01" }));
    await writePost(fx.content, `${ORG}/two.md`, postMeta("two", { publishedAt: "2025-01-02" }));
    const result = await runCli(buildArgs(fx, "--page-size", "1", "--quiet"));
    expect(result.code, result.stderr).toBe(0);
    expect((await readTreeJson<ContentPage>(fx.out, fileOf(contentsPage(2)))).meta.pagination).toEqual({ page: 2, limit: 1, pages: 2, total: 2, next: null, prev: 1 });
  });
});
