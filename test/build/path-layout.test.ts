/**
 * D9: every legal id is servable, `references` included, and any legal slug,
 * `by-slug` and `references` included: the file layout never collides.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { fileOf, parseApiPath, pathOf, routeOfFile } from "../../src/api-paths.js";
import type { Block, ContentDetail, ContentList, Reference } from "../../src/model/api.js";
import { buildFixture, type Fixture, makeFixture, removeDir } from "../fixtures/build-fixture.js";
import { insertBlock, insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { listFiles, readTreeJson } from "../fixtures/tree.js";

const ORG = "acme";
let fx: Fixture;

beforeAll(async () => {
  fx = await makeFixture();
  withDb(fx.db, (db) => {
    insertOrg(db, { id: ORG, slug: "acme" });
    insertBlock(db, ORG, { id: "references", slug: "by-slug", name: "Block references" });
    insertBlock(db, ORG, { id: "b2", slug: "references", name: "Block b2" });
  });
  await writePost(
    fx.content,
    "acme/one.md",
    postMeta("references", {
      slug: "by-slug",
      title: "Post references",
      references: [{ source: "S", url: "https://s.example/", asOf: "2024" }],
    }),
  );
  await writePost(fx.content, "acme/two.md", postMeta("p2", { slug: "references", title: "Post p2" }));
  await writePost(fx.content, "acme/three.md", postMeta("by-slug-x", { slug: "references-by-slug", title: "Post three" }));
  await buildFixture(fx);
});

afterAll(async () => {
  await removeDir(fx.dir);
});

test("ids `references` and slugs `by-slug` and `references` build, each on its own file", async () => {
  const read = <T>(route: Parameters<typeof fileOf>[0]) => readTreeJson<T>(fx.out, fileOf(route));
  expect((await read<ContentDetail>({ kind: "content", orgId: ORG, id: "references" })).title).toBe("Post references");
  expect((await read<ContentDetail>({ kind: "contentBySlug", orgId: ORG, slug: "by-slug" })).title).toBe("Post references");
  expect((await read<ContentDetail>({ kind: "contentBySlug", orgId: ORG, slug: "references" })).title).toBe("Post p2");
  expect((await read<ContentDetail>({ kind: "content", orgId: ORG, id: "p2" })).title).toBe("Post p2");
  expect(await read<Reference[]>({ kind: "references", orgId: ORG, id: "references" })).toEqual([
    { source: "S", url: "https://s.example/", asOf: "2024" },
  ]);
  expect(await read<Reference[]>({ kind: "references", orgId: ORG, id: "p2" })).toEqual([]);

  expect((await read<Block>({ kind: "block", orgId: ORG, id: "references" })).name).toBe("Block references");
  expect((await read<Block>({ kind: "blockBySlug", orgId: ORG, slug: "by-slug" })).name).toBe("Block references");
  expect((await read<Block>({ kind: "blockBySlug", orgId: ORG, slug: "references" })).name).toBe("Block b2");

  const list = await read<ContentList>({ kind: "contents", orgId: ORG });
  expect(list.items.map((i) => i.id).sort()).toEqual(["by-slug-x", "p2", "references"]);
});

test("every file of the tree is the file of exactly one API path, and back", async () => {
  const files = await listFiles(fx.out);
  // 4 lists/organization + page 1 of the contents + 2 blocks x 2 + 3 posts x 3.
  expect(files).toHaveLength(4 + 1 + 4 + 9);
  const paths = new Set<string>();
  for (const f of files) {
    const route = routeOfFile(f);
    expect(route, f).not.toBeNull();
    const apiPath = pathOf(route!);
    expect(parseApiPath(apiPath)).toEqual(route);
    expect(fileOf(route!)).toBe(f);
    paths.add(apiPath);
  }
  expect(paths.size).toBe(files.length);
});
