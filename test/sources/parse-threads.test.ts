import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleCliWith, runBundle } from "../fixtures/cli.js";
import { type Fixture, makeFixture, removeDir } from "../fixtures/build-fixture.js";
import { insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree } from "../fixtures/tree.js";

describe("parsing posts in worker threads", () => {
  let fx: Fixture;
  let bundleDir: string;
  beforeAll(async () => {
    fx = await makeFixture();
    withDb(fx.db, (db) => insertOrg(db, { id: "acme" }));
    for (let i = 0; i < 450; i++) {
      const meta = postMeta(`p${i}`, i % 50 === 0 ? { status: "draft" } : {});
      await writePost(fx.content, `acme/${i % 7}/p${i}.md`, meta, `# Post ${i}\n\nSome *text* with a [link](https://example.com/${i}).\n`);
    }
    await writePost(fx.content, "acme/broken.md", "---\nid: [unclosed\n---\nbody\n");
    bundleDir = await bundleCliWith("parse-worker", "sources/parse-worker.ts");
  });
  afterAll(async () => {
    await removeDir(fx.dir);
    await rm(bundleDir, { recursive: true, force: true });
  });

  it("two threads find the same problems and, once fixed, build the same tree as one", async () => {
    const cli = path.join(bundleDir, "cli.js");
    const args = (out: string) => ["build", "--db", fx.db, "--content", fx.content, "--out", out, "--json"];
    const one = await runBundle(cli, args(path.join(fx.dir, "one")), { CDSNAP_PARSE_THREADS: "1" });
    const two = await runBundle(cli, args(path.join(fx.dir, "two")), { CDSNAP_PARSE_THREADS: "2" });
    expect(one.code).toBe(1);
    expect(two.code).toBe(1);
    expect(two.stdout).toBe(one.stdout);
    const failure = JSON.parse(two.stdout) as { errors: { where: string; message: string }[] };
    expect(failure.errors).toEqual([
      expect.objectContaining({ where: expect.stringMatching(/^acme\/broken\.md:\d+$/), message: expect.stringMatching(/^front matter: /) }),
    ]);

    await writePost(fx.content, "acme/broken.md", postMeta("fixed"));
    const fixedOne = await runBundle(cli, args(path.join(fx.dir, "one")), { CDSNAP_PARSE_THREADS: "1" });
    const fixedTwo = await runBundle(cli, args(path.join(fx.dir, "two")), { CDSNAP_PARSE_THREADS: "2" });
    expect(JSON.parse(fixedOne.stdout)).toMatchObject({ parseThreads: 1, postsParsed: 451 });
    expect(JSON.parse(fixedTwo.stdout)).toMatchObject({ parseThreads: 2, postsParsed: 451 });
    expect(await hashTree(path.join(fx.dir, "two"))).toBe(await hashTree(path.join(fx.dir, "one")));
  });
});
