/** D1: what is published, decided at build time by status and the build instant `now`. */
import { describe, expect, test } from "vitest";
import { fileOf, type Route } from "../../src/api-paths.js";
import type { Block, ContentList } from "../../src/model/api.js";
import { buildFixture, type Fixture, fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { insertBlock, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { listFiles, liveGenerationOf, readPages, readTreeJson } from "../fixtures/tree.js";

const { fixture, orgFixture: fixtureOf } = fixturesRemovedAfterEach();

const ORG = "acme";

const orgFixture = () => fixtureOf(ORG);

/** Whether a post is visible anywhere: in the list, by id, by slug, or under references. */
async function visibility(fx: Fixture, id: string, slug: string) {
  const files = await listFiles(fx.out);
  const has = (route: Route) => files.includes(fileOf(route));
  const list = await readTreeJson<ContentList>(fx.out, fileOf({ kind: "contents", orgId: ORG }));
  return {
    listed: list.items.some((i) => i.id === id),
    byId: has({ kind: "content", orgId: ORG, id }),
    bySlug: has({ kind: "contentBySlug", orgId: ORG, slug }),
    references: has({ kind: "references", orgId: ORG, id }),
  };
}

const NOWHERE = { listed: false, byId: false, bySlug: false, references: false };
const EVERYWHERE = { listed: true, byId: true, bySlug: true, references: true };

describe("D1: publication", () => {
  test("a post whose instant is in the future is absent everywhere, and appears once built at or after it", async () => {
    const fx = await orgFixture();
    // 10:00 at +02:00 is 08:00 UTC.
    await writePost(fx.content, "acme/soon.md", postMeta("soon", { publishedAt: "2026-07-01T10:00:00+02:00" }));

    const early = await buildFixture(fx, { now: new Date("2026-07-01T07:59:59.999Z") });
    expect(await visibility(fx, "soon", "soon")).toEqual(NOWHERE);
    expect(early.orgs[0]).toMatchObject({ postsPublished: 0, postsScheduled: 1, nextPublishAt: "2026-07-01T08:00:00.000Z" });
    expect(early.nextPublishAt).toBe("2026-07-01T08:00:00.000Z");

    const onTime = await buildFixture(fx, { now: new Date("2026-07-01T08:00:00.000Z") });
    expect(await visibility(fx, "soon", "soon")).toEqual(EVERYWHERE);
    expect(onTime.orgs[0]).toMatchObject({ postsPublished: 1, postsScheduled: 0, nextPublishAt: null });
    expect(onTime.nextPublishAt).toBeNull();
  });

  test("a date-only value means 00:00 UTC and a date-time without offset is UTC, whatever the machine's zone", async () => {
    const previousTz = process.env.TZ;
    process.env.TZ = "Asia/Tokyo";
    try {
      const fx = await orgFixture();
      await writePost(fx.content, "acme/d.md", postMeta("date-only", { publishedAt: "2026-07-01" }));
      await writePost(fx.content, "acme/t.md", postMeta("no-offset", { publishedAt: "2026-07-01T08:00:00" }));

      const report = await buildFixture(fx, { now: new Date("2026-06-30T23:59:59.999Z") });
      expect(await visibility(fx, "date-only", "date-only")).toEqual(NOWHERE);
      expect(await visibility(fx, "no-offset", "no-offset")).toEqual(NOWHERE);
      expect(report.nextPublishAt).toBe("2026-07-01T00:00:00.000Z");

      await buildFixture(fx, { now: new Date("2026-07-01T00:00:00Z") });
      expect(await visibility(fx, "date-only", "date-only")).toEqual(EVERYWHERE);
      expect(await visibility(fx, "no-offset", "no-offset")).toEqual(NOWHERE);

      await buildFixture(fx, { now: new Date("2026-07-01T08:00:00Z") });
      expect(await visibility(fx, "no-offset", "no-offset")).toEqual(EVERYWHERE);
    } finally {
      if (previousTz === undefined) delete process.env.TZ;
      else process.env.TZ = previousTz;
    }
  });

  test("draft and archived posts never appear, however late the build", async () => {
    const fx = await orgFixture();
    await writePost(fx.content, "acme/a.md", postMeta("keep", { publishedAt: "2020-01-01" }));
    await writePost(fx.content, "acme/b.md", postMeta("drafted", { status: "draft", publishedAt: "2020-01-01" }));
    await writePost(fx.content, "acme/c.md", postMeta("retired", { status: "archived", publishedAt: "2020-01-01" }));
    const report = await buildFixture(fx, { now: new Date("2100-01-01T00:00:00Z") });
    expect(await visibility(fx, "drafted", "drafted")).toEqual(NOWHERE);
    expect(await visibility(fx, "retired", "retired")).toEqual(NOWHERE);
    expect(await visibility(fx, "keep", "keep")).toEqual(EVERYWHERE);
    expect(report.orgs[0]).toMatchObject({ postsPublished: 1, postsDraft: 1, postsArchived: 1, postsScheduled: 0 });
  });

  test("the demo's scheduled post appears when built after its date; its draft and archived posts still do not", async () => {
    const fx = await fixture({ demo: true });
    const report = await buildFixture(fx, { now: new Date("2099-01-01T00:00:00Z") });
    const list = await readTreeJson<ContentList>(fx.out, fileOf({ kind: "contents", orgId: "demo" }));
    expect(list.items[0]?.id).toBe("post-0018");
    const files = await listFiles(fx.out);
    expect(files).toContain(fileOf({ kind: "contentBySlug", orgId: "demo", slug: "centennial-reserve" }));
    expect(files).not.toContain(fileOf({ kind: "content", orgId: "demo", id: "post-0016" }));
    expect(files).not.toContain(fileOf({ kind: "content", orgId: "demo", id: "post-0017" }));
    expect(report.orgs.find((o) => o.orgId === "demo")).toMatchObject({
      postsPublished: 16,
      postsScheduled: 0,
      postsDraft: 1,
      postsArchived: 1,
      nextPublishAt: null,
    });
  });

  test("a block that stops being published leaves the list, its id and slug files and its pages", async () => {
    const fx = await orgFixture();
    withDb(fx.db, (db) => {
      insertBlock(db, ORG, { id: "promo", slug: "promo", pages: ["home"] });
      insertBlock(db, ORG, { id: "hero", slug: "hero", pages: ["home"] });
    });
    await buildFixture(fx);
    expect(await readPages(await liveGenerationOf(fx.out), ORG)).toEqual({ home: ["hero", "promo"] });

    withDb(fx.db, (db) => db.prepare("UPDATE blocks SET status = 'archived' WHERE id = 'promo'").run());
    const report = await buildFixture(fx);
    const files = await listFiles(fx.out);
    expect(files).not.toContain(fileOf({ kind: "block", orgId: ORG, id: "promo" }));
    expect(files).not.toContain(fileOf({ kind: "blockBySlug", orgId: ORG, slug: "promo" }));
    const list = await readTreeJson<{ items: Block[] }>(fx.out, fileOf({ kind: "blocks", orgId: ORG }));
    expect(list.items.map((b) => b.id)).toEqual(["hero"]);
    expect(await readPages(await liveGenerationOf(fx.out), ORG)).toEqual({ home: ["hero"] });
    expect(report.orgs[0]).toMatchObject({ blocksPublished: 1, blocksUnpublished: 1, filesRemoved: 2 });
  });
});
