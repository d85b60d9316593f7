/**
 * `cdsnap check` as CI and editors run it: exit codes, the human lines, `--json`,
 * `--org`, and that nothing is written.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { type Fixture, removeFixture } from "../fixtures/build-fixture.js";
import { post, writePost } from "../fixtures/posts.js";
import { runCli } from "../fixtures/cli.js";
import { makeCheckFixture } from "../fixtures/check-fixture.js";

let fx: Fixture | undefined;
afterEach(async () => {
  await removeFixture(fx);
  fx = undefined;
});

const args = (f: Fixture, ...extra: string[]) => ["check", "--db", f.db, "--content", f.content, ...extra];

interface JsonFinding {
  rule: string;
  where: string;
  message: string;
  file?: string;
  line?: number;
}

interface JsonResult {
  ok: boolean;
  buildOk: boolean;
  errors: JsonFinding[];
  warnings: JsonFinding[];
  orgsChecked: number;
  filesChecked: number;
  postsChecked: number;
}

/** One post failing every rule once, and one clean post. */
async function everyRuleFixture(): Promise<Fixture> {
  const f = await makeCheckFixture();
  await writePost(f, "acme/clean.md", post("clean", ["category: news"], "Nothing to see.\n"));
  await writePost(f, "acme/draft.md", post("draft-one", [], "x\n", "draft"));
  await writePost(f, "acme/dup.md", post("clean").replace("id: clean", "id: dup"));
  await writePost(
    f,
    "acme/bad.md",
    post(
      "bad",
      [
        "category: nowhere", // 8
        `excerpt: ${"e".repeat(201)}`, // 9
        "featuredImage: { url: /a.jpg, alt: '' }", // 10
        "seoMetadata:", // 11
        `  title: ${"t".repeat(61)}`, // 12
        `  description: ${"d".repeat(161)}`, // 13
        "references:", // 14
        "  - { source: One, url: https://example.com/1 }", // 15
        "  - { source: Two, url: https://example.com/2 }", // 16
      ],
      "Cites [1] and [3].\n[gone](post:gone) [draft](post:draft-one)\n", // body from line 18
      "published",
      "2999-01-01",
    ),
  );
  return f;
}

describe("cdsnap check", () => {
  test("--json lists every rule's finding with file and line, and exits 1 on errors", async () => {
    fx = await everyRuleFixture();
    const run = await runCli(args(fx, "--json"));
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout) as JsonResult;
    expect(result.ok).toBe(false);
    expect(result.buildOk).toBe(false);
    const summary = (list: JsonFinding[]) => list.map((f) => `${f.rule} ${f.where}`).sort();
    expect(summary(result.errors)).toEqual([
      "broken-internal-link acme/bad.md:19",
      "build acme/bad.md:8",
      "build acme/dup.md:4",
      "citation-without-reference acme/bad.md:18",
    ]);
    expect(summary(result.warnings)).toEqual([
      "excerpt-too-long acme/bad.md:9",
      "featured-image-alt acme/bad.md:10",
      "reference-never-cited acme/bad.md:16",
      "scheduled-post acme/bad.md:6",
      "seo-description-too-long acme/bad.md:13",
      "seo-title-too-long acme/bad.md:12",
    ]);
    // A scheduled post is not live, so its link to a draft breaks nothing yet: no link-to-unpublished.
    const first = result.errors.find((f) => f.rule === "citation-without-reference")!;
    expect(first).toEqual({
      rule: "citation-without-reference",
      where: "acme/bad.md:18",
      file: path.join(fx.content, "acme/bad.md"),
      line: 18,
      message: "[3] cites reference 3, but references has 2 entries",
    });
    expect(result).toMatchObject({ orgsChecked: 2, filesChecked: 4, postsChecked: 4 });
    expect(run.stderr).toBe("");
  });

  test("human output: one line per finding with file:line, errors first, and a summary", async () => {
    fx = await everyRuleFixture();
    const run = await runCli(args(fx));
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^error +acme\/bad\.md:8: category: "nowhere" is not a category of organization acme; its categories are: guides, news {2}\(build\)$/);
    expect(lines).toContain(
      "error   acme/bad.md:18: [3] cites reference 3, but references has 2 entries  (citation-without-reference)",
    );
    expect(lines).toContain("warning acme/bad.md:10: featuredImage.alt is empty; describe the image  (featured-image-alt)");
    const firstWarning = lines.findIndex((l) => l.startsWith("warning"));
    expect(lines.slice(0, firstWarning).every((l) => l.startsWith("error"))).toBe(true);
    expect(lines.at(-1)).toBe(
      "check: 4 errors, 6 warnings in 4 post files in 2 organizations; a build would fail on the 2 errors marked (build) and publish nothing; " +
        "the other 2 are lint errors, which a build would publish visibly broken",
    );
  });

  test("lint errors alone: exit 1, and the summary and --json say a build would succeed and publish them broken", async () => {
    fx = await makeCheckFixture();
    await writePost(fx, "acme/a.md", post("a", ["references:", "  - { source: One, url: https://example.com/1 }"], "Cites [1] and [2].\n"));
    const run = await runCli(args(fx));
    expect(run.code).toBe(1);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
      "check: 1 error, 0 warnings in 1 post file in 2 organizations; a build would succeed, but publish the lint error visibly broken; fix it first",
    );
    const json = await runCli(args(fx, "--json"));
    expect(json.code).toBe(1);
    const result = JSON.parse(json.stdout) as JsonResult;
    expect(result).toMatchObject({ ok: false, buildOk: true });
    expect(result.errors.map((f) => f.rule)).toEqual(["citation-without-reference"]);
    // The build agrees: it publishes.
    expect((await runCli(["build", "--db", fx.db, "--content", fx.content, "--out", fx.out, "--quiet"])).code).toBe(0);
  });

  test("build errors alone: the summary says a build would fail", async () => {
    fx = await makeCheckFixture();
    await writePost(fx, "acme/a.md", post("a", ["category: nowhere"]));
    await writePost(fx, "acme/b.md", post("b", ["category: elsewhere"]));
    const run = await runCli(args(fx));
    expect(run.code).toBe(1);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
      "check: 2 errors, 0 warnings in 2 post files in 2 organizations; a build would fail on the 2 errors marked (build) and publish nothing",
    );
  });

  test("the summary counts every post file looked at, those the build refuses included", async () => {
    fx = await makeCheckFixture();
    for (const slug of ["a", "b", "c", "d"]) await writePost(fx, `acme/${slug}.md`, post(slug));
    await writePost(fx, "acme/broken.md", post("broken", ["colour: red"]));
    const run = await runCli(args(fx));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("error   acme/broken.md:8: colour: unknown key  (build)");
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
      "check: 1 error, 0 warnings in 5 post files in 2 organizations; a build would fail on the error marked (build) and publish nothing",
    );
    const json = JSON.parse((await runCli(args(fx, "--json"))).stdout) as JsonResult;
    expect(json).toMatchObject({ filesChecked: 5, postsChecked: 4 });
  });

  test("warnings alone exit 0", async () => {
    fx = await makeCheckFixture();
    await writePost(fx, "acme/a.md", post("a", ["featuredImage: { url: /a.jpg, alt: '' }"]));
    const run = await runCli(args(fx));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("check: 0 errors, 1 warning in 1 post file in 2 organizations; a build would accept these sources");
  });

  test("clean sources exit 0 with --json ok", async () => {
    fx = await makeCheckFixture();
    await writePost(fx, "acme/a.md", post("a"));
    const run = await runCli(args(fx, "--json"));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ ok: true, buildOk: true, errors: [], warnings: [], orgsChecked: 2, filesChecked: 1, postsChecked: 1 });
  });

  test("--org checks only that organization's folder", async () => {
    fx = await makeCheckFixture();
    await writePost(fx, "acme/a.md", post("a", ["category: nowhere"]));
    await writePost(fx, "other/b.md", post("b"));
    const acme = JSON.parse((await runCli(args(fx, "--json", "--org", "other"))).stdout) as JsonResult;
    expect(acme).toMatchObject({ ok: true, orgsChecked: 1, filesChecked: 1, postsChecked: 1 });
    const missing = await runCli(args(fx, "--org", "nobody"));
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain("--org nobody: no organization has this id");
  });

  test("a usage problem exits 2; check writes nothing", async () => {
    fx = await makeCheckFixture();
    const missingDb = await runCli(["check", "--db", path.join(fx.dir, "nope.db"), "--content", fx.content]);
    expect(missingDb.code).toBe(2);
    expect(missingDb.stderr).toContain("does not exist");
    const missingContent = await runCli(["check", "--db", fx.db, "--content", path.join(fx.dir, "nope")]);
    expect(missingContent.code).toBe(2);
    const asJson = await runCli(["check", "--db", path.join(fx.dir, "nope.db"), "--content", fx.content, "--json"]);
    expect(asJson.code).toBe(2);
    expect(asJson.stderr).toBe("");
    expect(JSON.parse(asJson.stdout)).toEqual({ ok: false, code: "usage", message: expect.stringContaining("does not exist"), errors: [] });

    await writePost(fx, "acme/a.md", post("a"));
    const before = await stat(fx.db);
    const entries = await readdir(fx.dir);
    expect((await runCli(args(fx))).code).toBe(0);
    expect((await stat(fx.db)).mtimeMs).toBe(before.mtimeMs);
    expect(await readdir(fx.dir)).toEqual(entries);
  });
});
