/**
 * Posts deleted, replaced and renamed while a build lists the content folder
 * (an editor saving, a `git checkout` in another terminal, `cdsnap dev`
 * building as the author types). A post that vanishes between the folder's
 * listing and its own look is just gone; it must never take the other posts
 * of its folder with it. Every build that succeeds publishes every post that
 * was never touched.
 */
import { rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { fileOf } from "../../src/api-paths.js";
import { buildFixture, fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { post, writePost } from "../fixtures/posts.js";
import { budget, scaled } from "../fixtures/soak.js";
import { readTreeJson } from "../fixtures/tree.js";

const { orgFixture } = fixturesRemovedAfterEach();
const BUILDS = scaled(40);

describe("a build while posts come and go", () => {
  test(
    "posts never touched are published by every build that succeeds, whatever happens to their neighbours",
    async () => {
      const fx = await orgFixture("acme");
      const steady = ["steady-a", "steady-b", "steady-c"];
      const churning = Array.from({ length: 20 }, (_, i) => `churn-${i}`);
      for (const slug of [...steady, ...churning]) await writePost(fx, `acme/${slug}.md`, post(slug));
      await buildFixture(fx);

      let stop = false;
      let round = 0;
      const churn = (async () => {
        while (!stop) {
          round++;
          await Promise.all(
            churning.map(async (slug, i) => {
              const file = path.join(fx.content, "acme", `${slug}.md`);
              // Three ways a post disappears for a moment: deleted and written again,
              // moved aside by an editor's backup, replaced by a rename.
              if ((round + i) % 3 === 0) {
                await unlink(file);
                await writeFile(file, post(slug));
              } else if ((round + i) % 3 === 1) {
                await rename(file, `${file}~`);
                await writeFile(file, post(slug));
                await unlink(`${file}~`);
              } else {
                await writeFile(`${file}.tmp`, post(slug));
                await rename(`${file}.tmp`, file);
              }
            }),
          );
        }
      })();

      const published: string[][] = [];
      const failures: { where: string; message: string }[] = [];
      try {
        for (let i = 0; i < BUILDS; i++) {
          // A build may fail (a post changed between its look and its read); it then publishes nothing.
          const built = await buildFixture(fx).then(
            () => true,
            (error: Error & { problems?: { where: string; message: string }[] }) => {
              failures.push(...(error.problems ?? [{ where: "", message: error.message }]));
              return false;
            },
          );
          if (!built) continue;
          const list = await readTreeJson<{ items: { slug: string }[] }>(fx.out, fileOf({ kind: "contents", orgId: "acme" }));
          published.push(list.items.map((p) => p.slug));
        }
      } finally {
        stop = true;
        await churn;
      }
      expect(published.length).toBeGreaterThan(0);
      for (const slugs of published) expect(slugs).toEqual(expect.arrayContaining(steady));
      // A build that fails blames a post caught mid-change, in words a person can act on.
      for (const failure of failures) {
        expect(failure.where).toMatch(/^acme\/churn-\d+\.md/);
        expect(failure.message).not.toMatch(/ENOENT|EISDIR/);
      }
    },
    budget(120_000),
  );
});
