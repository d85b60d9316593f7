/**
 * A build's `changedTags` (the on-change hook's `tags`): purging them must drop
 * every cached answer whose bytes changed, or that vanished, by the `Cache-Tag`
 * the server sent with it before the build, and nothing of an item the build
 * did not touch.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { parseApiPath, pathOf, routeOfFile } from "../../src/api-paths.js";
import type { BuildReport } from "../../src/report.js";
import { cacheTagsOf } from "../../src/route-table.js";
import { buildFixture, fixturesRemovedAfterEach, type Fixture } from "../fixtures/build-fixture.js";
import { insertBlock, insertCategory, insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { listFiles } from "../fixtures/tree.js";

const ORG = "acme";
const { orgFixture } = fixturesRemovedAfterEach();

/** Every answer of the live tree: API path → its bytes and the Cache-Tag values the server sends with it. */
async function answers(out: string): Promise<Map<string, { bytes: string; tags: string[] }>> {
  const all = new Map<string, { bytes: string; tags: string[] }>();
  for (const rel of await listFiles(out, { followLinks: true })) {
    const route = routeOfFile(rel);
    if (!route) continue;
    const bytes = await readFile(path.join(out, rel), "utf8");
    all.set(pathOf(route), { bytes, tags: cacheTagsOf(route, JSON.parse(bytes)).split(",") });
  }
  return all;
}

/**
 * Builds, and checks the purge the report asks for against the answers before
 * and after: every changed or removed answer is dropped; every answer dropped
 * that did not change shows the same item as one that did.
 */
async function buildAndCheckPurge(fx: Fixture): Promise<BuildReport> {
  const before = await answers(fx.out);
  const report = await buildFixture(fx);
  const after = await answers(fx.out);
  const purged = new Set(report.changedTags);
  const isPurged = (tags: string[]) => tags.some((tag) => purged.has(tag));
  const stale = [...before].filter(([apiPath, answer]) => after.get(apiPath)?.bytes !== answer.bytes);
  for (const [apiPath, answer] of stale) expect(isPurged(answer.tags), `${apiPath} (${answer.tags}) stays cached`).toBe(true);
  const staleItems = new Set(stale.flatMap(([, answer]) => answer.tags.slice(1, 2)));
  for (const [apiPath, answer] of before) {
    if (isPurged(answer.tags)) expect(staleItems.has(answer.tags[1]!), `${apiPath} is purged for nothing`).toBe(true);
  }
  // The paths the report lists are exactly the answers that changed, appeared or vanished.
  const differ = new Set([...before.keys(), ...after.keys()].filter((p) => before.get(p)?.bytes !== after.get(p)?.bytes));
  const listed = [...report.changedPaths.added, ...report.changedPaths.changed, ...report.changedPaths.removed];
  expect(new Set(listed)).toEqual(differ);
  return report;
}

describe("a build's changed tags", () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await orgFixture(ORG);
    withDb(fx.db, (db) => {
      insertCategory(db, ORG, { id: "c1", slug: "news", value: "News", position: 0 });
      insertBlock(db, ORG, {
        id: "hero",
        slug: "hero",
        name: "Hero",
        status: "published",
        position: 0,
        fields: [{ key: "title", type: "text", value: "Hello" }],
        pages: ["home"],
      });
    });
    for (const id of ["p1", "p2", "p3"]) await writePost(fx, `${ORG}/${id}.md`, postMeta(id, { category: "news" }));
    await buildFixture(fx);
  });

  it("an edited post: its item tag and its list's", async () => {
    await writePost(fx, `${ORG}/p2.md`, postMeta("p2", { category: "news", title: "Retitled" }));
    const report = await buildAndCheckPurge(fx);
    // And page 1 of the list and of its category, which hold it.
    expect(report.changedTags).toEqual(["categoryContentsPage:acme/news/1", "content:acme/p2", "contents:acme", "contentsPage:acme/1"]);
  });

  it("a slug handed from one post to another: both posts", async () => {
    await writePost(fx, `${ORG}/p1.md`, postMeta("p1", { category: "news", slug: "p1-old" }));
    await writePost(fx, `${ORG}/p2.md`, postMeta("p2", { category: "news", slug: "p1" }));
    const report = await buildAndCheckPurge(fx);
    expect(report.changedTags).toEqual(["categoryContentsPage:acme/news/1", "content:acme/p1", "content:acme/p2", "contents:acme", "contentsPage:acme/1"]);
  });

  it("a post unpublished: the tag of the answers that vanished", async () => {
    await writePost(fx, `${ORG}/p3.md`, postMeta("p3", { category: "news", status: "draft" }));
    const report = await buildAndCheckPurge(fx);
    expect(report.changedPaths.removed.map((p) => parseApiPath(p)?.kind).sort()).toEqual(["content", "contentBySlug", "references"]);
    expect(report.changedTags).toEqual(["categoryContentsPage:acme/news/1", "content:acme/p3", "contents:acme", "contentsPage:acme/1"]);
  });

  it("a block renamed in the database: the block and the block list", async () => {
    withDb(fx.db, (db) => db.prepare("UPDATE blocks SET name = 'Banner' WHERE id = 'hero'").run());
    const report = await buildAndCheckPurge(fx);
    expect(report.changedTags).toEqual(["block:acme/hero", "blocks:acme"]);
  });

  it("a build that changes nothing has no tags", async () => {
    const report = await buildAndCheckPurge(fx);
    expect(report).toMatchObject({ changed: false, changedTags: [] });
  });

  it("a new organization: every answer of it, by its collections and items", async () => {
    withDb(fx.db, (db) => insertOrg(db, { id: "bravo", slug: "bravo" }));
    const report = await buildAndCheckPurge(fx);
    expect(report.changedTags).toEqual(["blocks:bravo", "categories:bravo", "contents:bravo", "contentsPage:bravo/1", "organization:bravo"]);
  });
});
