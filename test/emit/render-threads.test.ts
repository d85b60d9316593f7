/**
 * Posts rendered, written and inspected in worker threads (render-pool.ts):
 * the CLI bundled with its workers beside it, as dist/ is laid out, builds the
 * same tree with two threads as with one, on a first build and on a rebuild
 * that renders every post again into a copy of the live tree; and a secret a
 * worker finds fails the build with the same problems.
 */
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleCliWith, runBundle } from "../fixtures/cli.js";
import { type Fixture, makeFixture, removeDir } from "../fixtures/build-fixture.js";
import { insertCategory, insertOrg, insertSecret, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree } from "../fixtures/tree.js";

const POSTS = 450;
const SECRET = "sk_live_render_worker_canary_7f3a";

describe("rendering posts in worker threads", () => {
  let fx: Fixture;
  let bundleDir: string;
  beforeAll(async () => {
    fx = await makeFixture();
    withDb(fx.db, (db) => {
      insertOrg(db, { id: "acme" });
      insertCategory(db, "acme", { id: "c1", slug: "news", value: "News", position: 0 });
      insertSecret(db, "acme", "stripe", SECRET);
    });
    for (let i = 0; i < POSTS; i++) {
      const meta = postMeta(`p${i}`, { ...(i % 50 === 0 ? { status: "draft" } : {}), ...(i % 3 === 0 ? { category: "news" } : {}) });
      await writePost(fx.content, `acme/${i % 7}/p${i}.md`, meta, `# Post ${i}\n\nSome *text* with a [link](https://example.com/${i}).\n`);
    }
    bundleDir = await bundleCliWith("render-worker", "emit/render-worker.ts");
  });
  afterAll(async () => {
    await removeDir(fx.dir);
    await rm(bundleDir, { recursive: true, force: true });
  });

  const cli = () => path.join(bundleDir, "cli.js");
  const args = (out: string) => ["build", "--db", fx.db, "--content", fx.content, "--out", out, "--json"];
  const buildWith = async (threads: number, out: string) => {
    const result = await runBundle(cli(), args(path.join(fx.dir, out)), { CDSNAP_RENDER_THREADS: String(threads) });
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as { postsRendered: number; changed: boolean };
  };

  it("two threads build the same tree as one, first and when every post is rendered again", async () => {
    expect(await buildWith(1, "one")).toMatchObject({ postsRendered: POSTS - POSTS / 50 });
    expect(await buildWith(2, "two")).toMatchObject({ postsRendered: POSTS - POSTS / 50 });
    expect(await hashTree(path.join(fx.dir, "two"))).toBe(await hashTree(path.join(fx.dir, "one")));

    // A new category name is in a third of the posts' files; the code's version in none: the key of
    // every post in the category changes, and each is rendered into the copy of the live tree.
    withDb(fx.db, (db) => db.prepare("UPDATE categories SET value = 'Tidings' WHERE id = 'c1'").run());
    const inNews = Array.from({ length: POSTS }, (_, i) => i).filter((i) => i % 3 === 0 && i % 50 !== 0).length;
    expect(inNews).toBeGreaterThanOrEqual(140);
    await writePost(fx.content, "acme/extra/only-one-thread-renders-the-rest.md", postMeta("extra"));
    for (let i = 0; i < POSTS; i++) {
      if (i % 3 !== 0) await writePost(fx.content, `acme/${i % 7}/p${i}.md`, postMeta(`p${i}`, { title: `Again ${i}` }));
    }
    const one = await buildWith(1, "one");
    const two = await buildWith(2, "two");
    expect(two.postsRendered).toBe(one.postsRendered);
    expect(two.postsRendered).toBeGreaterThanOrEqual(400);
    expect(await hashTree(path.join(fx.dir, "two"))).toBe(await hashTree(path.join(fx.dir, "one")));
  });

  it("the preview tree is the same with two threads as with one: drafts rendered with their status in the workers", async () => {
    const previewArgs = (out: string) => [...args(path.join(fx.dir, out)), "--preview"];
    const one = await runBundle(cli(), previewArgs("preview-one"), { CDSNAP_RENDER_THREADS: "1" });
    const two = await runBundle(cli(), previewArgs("preview-two"), { CDSNAP_RENDER_THREADS: "2" });
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    const report = JSON.parse(two.stdout) as { preview: { postsRendered: number } };
    expect(report.preview.postsRendered).toBeGreaterThanOrEqual(POSTS);
    expect(await hashTree(path.join(fx.dir, "preview-two.preview"))).toBe(await hashTree(path.join(fx.dir, "preview-one.preview")));
    const draft = JSON.parse(await readFile(path.join(fx.dir, "preview-two.preview", "api/organizations/acme/contents/p0.json"), "utf8")) as { status: string };
    expect(draft.status).toBe("draft");
  });

  it("a secret in a post, found by a worker's inspection, fails the build as it does in one thread", async () => {
    for (const i of [3, 303, 447]) {
      await writePost(fx.content, `acme/${i % 7}/p${i}.md`, postMeta(`p${i}`, { category: "news" }), `Leaked: ${SECRET}\n`);
    }
    // A first build: every post is rendered, most of them in the worker.
    const one = await runBundle(cli(), args(path.join(fx.dir, "secret-one")), { CDSNAP_RENDER_THREADS: "1" });
    const two = await runBundle(cli(), args(path.join(fx.dir, "secret-two")), { CDSNAP_RENDER_THREADS: "2" });
    expect(one.code).toBe(1);
    expect(two.code).toBe(1);
    expect(two.stdout).toBe(one.stdout);
    expect(two.stdout).toContain('holds the value of secret \\"stripe\\" of organization acme');
    expect(two.stdout).not.toContain(SECRET);
  });
});
