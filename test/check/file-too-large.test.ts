/**
 * Files too large for the edge: Cloudflare Workers static assets refuse a file
 * over 25 MiB, so a post file, or a tree file a build makes, over that is a
 * warning from `check` and from every build, which still succeeds.
 */
import { describe, expect, test } from "vitest";
import { EDGE_FILE_LIMIT } from "../../src/model/edge-file-limit.js";
import { buildFixture, fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { check, makeCheckFixture, ofRule } from "../fixtures/check-fixture.js";
import { runCli } from "../fixtures/cli.js";
import { post, writePost } from "../fixtures/posts.js";

const { removeAfterEach } = fixturesRemovedAfterEach();

async function fixture() {
  const fx = await makeCheckFixture();
  removeAfterEach(fx.dir);
  return fx;
}

const WHY = /Cloudflare Workers static assets refuse files over 25 MiB/;

describe("files too large for the edge", () => {
  test("a post file over 25 MiB: build and check warn at the post, and both succeed", async () => {
    const fx = await fixture();
    const paragraph = "A long paragraph of the post, on and on.\n\n";
    await writePost(fx, "acme/big.md", post("big", [], paragraph.repeat(Math.ceil((EDGE_FILE_LIMIT + 2 ** 20) / paragraph.length))));
    await writePost(fx, "acme/small.md", post("small"));

    const run = await runCli(["build", "--db", fx.db, "--content", fx.content, "--out", fx.out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^warning: acme\/big\.md: is 26\.0 MiB, and the tree files a build makes of it once published at least as large; /m);
    expect(run.stderr).toMatch(WHY);
    // One warning for the post, not one more for each of its tree files.
    expect(run.stderr.match(/^warning: /gm)).toHaveLength(1);

    const result = await check(fx);
    expect(result.ok).toBe(true);
    expect(ofRule(result, "file-too-large")).toEqual([
      { rule: "file-too-large", severity: "warning", where: "acme/big.md", message: expect.stringMatching(WHY) },
    ]);
  }, 120_000);

  test("a post under 25 MiB whose tree file is over it (JSON escapes every quote): a warning naming the file", async () => {
    const fx = await fixture();
    const quotes = `${'"'.repeat(100)}\n`;
    await writePost(fx, "acme/quotes.md", post("quotes", [], quotes.repeat(Math.ceil(EDGE_FILE_LIMIT / 2 / quotes.length) + 10_000)));

    const report = await buildFixture(fx);
    const message = /^makes the tree file api\/organizations\/acme\/contents\/quotes\.json of 2\d\.\d MiB; Cloudflare Workers static assets refuse files over 25 MiB: shorten or split the post/;
    expect(report.warnings).toEqual([{ rule: "file-too-large", where: "acme/quotes.md", message: expect.stringMatching(message) }]);
    // A build that changes nothing keeps the tree, and still says so.
    expect((await buildFixture(fx)).warnings).toEqual(report.warnings);

    expect(ofRule(await check(fx), "file-too-large")).toEqual([
      { rule: "file-too-large", severity: "warning", where: "acme/quotes.md", message: expect.stringMatching(message) },
    ]);
  }, 120_000);

  test("a contents list over 25 MiB: a warning at the tree file, from build and check", async () => {
    const fx = await fixture();
    // Each summary holds the excerpt twice (as the SEO description too); 14 posts of a 1,000,000-character excerpt pass 25 MiB.
    for (let n = 0; n < 14; n++) await writePost(fx, `acme/p${n}.md`, post(`p${n}`, [`excerpt: ${"x".repeat(1_000_000)}`]));

    // The list, and its page 1, which holds all 14 at 20 a page.
    const where = ["api/organizations/acme/contents.json", "api/organizations/acme/contents/page/1.json"];
    const message = /^is 2\d\.\d MiB; Cloudflare Workers static assets refuse files over 25 MiB: publish the tree from R2, or serve it with cdsnap serve$/;
    const report = await buildFixture(fx);
    expect(report.warnings).toEqual(where.map((rel) => ({ rule: "file-too-large", where: rel, message: expect.stringMatching(message) })));
    expect(ofRule(await check(fx), "file-too-large")).toEqual(
      where.map((rel) => ({ rule: "file-too-large", severity: "warning", where: rel, message: expect.stringMatching(message) })),
    );
  }, 120_000);
});
