/**
 * `cdsnap build` as CI runs it: exit codes, every problem on stderr, the human
 * report and `--json`.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import type { BuildReport } from "../../src/report.js";
import { type Fixture, fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { insertBlock, insertCategory, insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree, pathExists } from "../fixtures/tree.js";
import { buildArgs, cliPath, runCli } from "../fixtures/cli.js";

const { fixture } = fixturesRemovedAfterEach();

beforeAll(async () => {
  await cliPath(); // bundle once, outside any single test's time
});

const front = (lines: string[], body = "Body.\n") => ["---", ...lines, "---", body].join("\n");
const VALID = ["id: x", "title: T", "slug: x", "status: published", "publishedAt: 2020-01-05", "authorName: A"];
/** VALID with some lines replaced by key, plus extra lines (lines 2-7 are the valid keys). */
function lines(replace: Record<string, string | null>, extra: string[] = []): string[] {
  const out: string[] = [];
  for (const line of VALID) {
    const key = line.slice(0, line.indexOf(":"));
    if (!(key in replace)) out.push(line);
    else if (replace[key] !== null) out.push(replace[key]!);
  }
  return [...out, ...extra];
}

/** A small organization with a past post, and two posts scheduled far in the future. */
async function reportFixture(): Promise<Fixture> {
  const fx = await fixture();
  withDb(fx.db, (db) => {
    insertOrg(db, { id: "acme", slug: "acme" });
    insertOrg(db, { id: "other", slug: "other" });
    insertBlock(db, "acme", { id: "b1", slug: "b1" });
    insertBlock(db, "acme", { id: "b2", slug: "b2", status: "draft" });
    insertBlock(db, "acme", { id: "b3", slug: "b3", status: "archived" });
  });
  await writePost(fx.content, "acme/old.md", postMeta("old", { publishedAt: "2020-01-01" }));
  await writePost(fx.content, "acme/later.md", postMeta("later", { publishedAt: "2999-01-01" }));
  await writePost(fx.content, "acme/sooner.md", postMeta("sooner", { publishedAt: "2990-06-15T12:30:00+02:00" }));
  await writePost(fx.content, "acme/draft.md", postMeta("draft", { status: "draft" }));
  await writePost(fx.content, "acme/gone.md", postMeta("gone", { status: "archived" }));
  return fx;
}

describe("cdsnap build", () => {
  test("--json prints the report as one JSON object with ok: true, per-organization counts and the next publish instant", async () => {
    const fx = await reportFixture();
    const result = await runCli(buildArgs(fx, "--json"));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as BuildReport & { ok: boolean };
    expect(report.ok).toBe(true);
    expect(report.changed).toBe(true);
    expect(report.durationMs).toBeGreaterThanOrEqual(0);
    expect(report.nextPublishAt).toBe("2990-06-15T10:30:00.000Z");
    const acme = report.orgs.find((o) => o.orgId === "acme");
    expect(acme).toMatchObject({
      postsPublished: 1,
      postsDraft: 1,
      postsArchived: 1,
      postsScheduled: 2,
      blocksPublished: 1,
      blocksUnpublished: 2,
      filesRemoved: 0,
      nextPublishAt: "2990-06-15T10:30:00.000Z",
    });
    // organization, categories, blocks, contents and its page 1, block b1 by id and slug, post old by id, slug, references.
    expect(acme?.filesWritten).toBe(10);
    expect(acme?.filesUnchanged).toBe(0);
    expect(report.orgs.find((o) => o.orgId === "other")).toMatchObject({ postsPublished: 0, nextPublishAt: null });

    const again = JSON.parse((await runCli(buildArgs(fx, "--json"))).stdout) as BuildReport;
    expect(again.orgs.find((o) => o.orgId === "acme")).toMatchObject({ filesWritten: 0, filesUnchanged: 10 });
  });

  test("the human report names each organization, what it skipped, its files and the next publish", async () => {
    const fx = await reportFixture();
    const result = await runCli(buildArgs(fx));
    expect(result.code).toBe(0);
    const acmeLine = result.stdout.split("\n").find((l) => l.startsWith("acme:")) ?? "";
    expect(acmeLine).toBe(
      "acme: published 1 post, 1 block, 0 categories; skipped posts: 1 draft, 1 archived, 2 scheduled; " +
        "skipped 2 unpublished blocks; files 10 written, 0 unchanged, 0 removed; next publish 2990-06-15T10:30:00.000Z",
    );
    // Counts of one take the singular, the rest the plural; a line without a next publish ends with its files.
    expect(result.stdout).toMatch(/^other: published 0 posts, 0 blocks, 0 categories; .*; files \d+ written, 0 unchanged, 0 removed$/m);
    expect(result.stdout).toMatch(/next scheduled publish: 2990-06-15T10:30:00\.000Z/);
  });

  test("the flags can come from CDSNAP_DB, CDSNAP_CONTENT and CDSNAP_OUT", async () => {
    const fx = await reportFixture();
    const result = await runCli(["build", "--json"], {
      env: { CDSNAP_DB: fx.db, CDSNAP_CONTENT: fx.content, CDSNAP_OUT: fx.out },
    });
    expect(result.code).toBe(0);
    expect(await pathExists(path.join(fx.out, "api/organizations/acme/contents/old.json"))).toBe(true);
  });

  test("an unknown --org id exits non-zero, says so, and leaves --out as it was", async () => {
    const fx = await reportFixture();
    expect((await runCli(buildArgs(fx))).code).toBe(0);
    const before = await hashTree(fx.out);
    const result = await runCli(buildArgs(fx, "--org", "nope"));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/^--org nope: no organization has this id$/m);
    expect(await hashTree(fx.out)).toBe(before);
  });

  test("bad data: every problem is listed on stderr with its file:line or table[key], exit non-zero, nothing written", async () => {
    const fx = await fixture();
    withDb(fx.db, (db) => {
      insertOrg(db, { id: "acme", slug: "acme" });
      insertOrg(db, { id: "acme2", slug: "Not A Slug" });
      insertCategory(db, "acme", { id: "cat", slug: "news", value: "News" });
      insertBlock(db, "acme", { id: "by-slug", slug: "reserved" });
      insertBlock(db, "acme", { id: "b-slug", slug: "Bad_Slug" });
      insertBlock(db, "acme", {
        id: "b-fields",
        slug: "fields",
        fields: [
          { key: "k".repeat(65), type: "text", value: "x" },
          { key: "dup", type: "text", value: "1" },
          { key: "dup", type: "text", value: "2" },
          { key: "long", type: "text", value: "x".repeat(100_001) },
          { key: "clip", type: "video", value: { url: "/v.mp4", status: "queued" } },
          { key: "pic", type: "image", value: { url: "//cdn.example/a.png", alt: "" } },
        ],
      });
    });
    const c = fx.content;
    await writePost(c, "acme/a.md", front(lines({ id: "id: by-slug", slug: "slug: a" })));
    await writePost(c, "acme/b.md", front(lines({ id: "id: b", slug: "slug: b", publishedAt: "publishedAt: 2026-02-30" })));
    await writePost(c, "acme/c.md", front(lines({ id: "id: c", slug: "slug: c" }, ["colour: red"])));
    await writePost(c, "acme/d.md", front(lines({ id: "id: d", slug: "slug: d" }, ["category: gardening"])));
    await writePost(c, "acme/e.md", front(lines({ id: "id: same", slug: "slug: e" })));
    await writePost(c, "acme/f.md", front(lines({ id: "id: same", slug: "slug: f" })));
    await writePost(
      c,
      "acme/g.md",
      front(lines({ id: "id: g", slug: "slug: g" }, ["references:", "  - source: S", "    url: javascript:alert(1)"])),
    );
    await writePost(
      c,
      "acme/h.md",
      front(lines({ id: "id: h", slug: "slug: h" }, ["featuredImage:", "  url: //evil.example/x.png", "  alt: x"])),
    );
    await writePost(c, "acme/i.md", front(lines({ id: "id: i", slug: "slug: i", authorName: null })));
    await writePost(c, "acme/j.md", Buffer.concat([Buffer.from(front(lines({ id: "id: j", slug: "slug: j" }))), Buffer.from([0xc3, 0x28])]));
    await writePost(c, "acme/k.md", ["---", ...lines({ id: "id: k", slug: "slug: k" }), "", "no closing line"].join("\n"));
    await writePost(c, "acme/l.md", front(lines({ id: "id: l", slug: "slug: l" }, ["excerpt: !!js/function 'function(){}'"])));
    await writePost(c, "acme/m.md", front(lines({ id: "id: m", slug: "slug: Bad-Slug" })));
    await writePost(c, "stray.md", front(lines({})));
    await writePost(c, "ghost/p.md", front(lines({})));
    await mkdir(path.join(fx.dir, "outside"));
    await writeFile(path.join(fx.dir, "outside", "secret.md"), front(lines({ id: "id: s", slug: "slug: s" })));
    await symlink(path.join(fx.dir, "outside", "secret.md"), path.join(c, "acme", "link.md"));

    const expected: [string, RegExp][] = [
      ["acme/a.md:2", /^id: .*reserved/],
      ["acme/b.md:6", /^publishedAt: /],
      ["acme/c.md:8", /^colour: unknown key$/],
      ["acme/d.md:8", /^category: "gardening" is not a category of organization acme; its categories are: news$/],
      ["acme/f.md:2", /^id: "same" is also used by acme\/e\.md:2$/],
      ["acme/g.md:10", /^references\.0\.url: /],
      ["acme/h.md:9", /^featuredImage\.url: /],
      ["acme/i.md:2", /^authorName: is required$/],
      ["acme/j.md", /^is not valid UTF-8 text$/],
      ["acme/k.md:1", /no closing '---' line/],
      ["acme/l.md:8", /^front matter: /],
      ["acme/m.md:4", /^slug: /],
      ["acme/link.md", /links outside the content folder/],
      ["stray.md", /outside any organization folder/],
      ["ghost/", /no organization has the id "ghost"/],
      ["organizations[id=acme2]", /^slug: /],
      ["blocks[org_id=acme id=by-slug]", /^id: .*reserved/],
      ["blocks[org_id=acme id=b-slug]", /^slug: /],
      ["block_fields[org_id=acme block_id=b-fields position=0]", /^key: /],
      ["block_fields[org_id=acme block_id=b-fields position=2]", /^key: "dup" is used twice in block b-fields$/],
      ["block_fields[org_id=acme block_id=b-fields position=3]", /^value: .*100000/],
      ["block_fields[org_id=acme block_id=b-fields position=4]", /^value\.status: /],
      ["block_fields[org_id=acme block_id=b-fields position=5]", /^value\.url: /],
    ];

    const result = await runCli(buildArgs(fx));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    const reported = result.stderr.split("\n");
    for (const [where, message] of expected) {
      const found = reported.some((line) => line.startsWith(`${where}: `) && message.test(line.slice(where.length + 2)));
      expect(found, `${where}: ${message} missing from stderr:\n${result.stderr}`).toBe(true);
    }
    const count = Number(/the sources have (\d+) problems; nothing was written/.exec(result.stderr)?.[1]);
    expect(count).toBeGreaterThanOrEqual(expected.length);
    expect(await pathExists(fx.out)).toBe(false);
  });

  test("--json on a failed build prints one JSON object with every problem, file and line, and exits 1", async () => {
    const fx = await fixture();
    withDb(fx.db, (db) => insertOrg(db, { id: "acme", slug: "acme" }));
    await writePost(fx.content, "acme/a.md", front(lines({ title: "title: Note: a colon" })));
    await writePost(fx.content, "acme/b.md", front(lines({ id: "id: b", slug: "slug: b" }, ["category: nowhere"])));
    await writePost(fx.content, "stray.md", front(lines({})));
    const result = await runCli(buildArgs(fx, "--json"));
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("");
    const failure = JSON.parse(result.stdout) as { ok: boolean; code: string; message: string; errors: unknown[] };
    expect(failure).toEqual({
      ok: false,
      code: "invalid_sources",
      message: "the sources have 3 problems; nothing was written",
      errors: [
        {
          rule: "build",
          where: "acme/a.md:3",
          file: path.join(fx.content, "acme/a.md"),
          line: 3,
          message: `front matter: a value containing ': ' must be quoted: title: "Note: a colon"`,
        },
        {
          rule: "build",
          where: "acme/b.md:8",
          file: path.join(fx.content, "acme/b.md"),
          line: 8,
          message: 'category: "nowhere" is not a category of organization acme; it has no categories yet',
        },
        { rule: "build", where: "stray.md", file: path.join(fx.content, "stray.md"), message: expect.stringMatching(/outside any organization folder/) },
      ],
    });
    expect(await pathExists(fx.out)).toBe(false);
  });

  test("--json on a usage error prints one JSON object too, and exits 2", async () => {
    const fx = await fixture();
    const missingDb = await runCli(["build", "--db", path.join(fx.dir, "nope.db"), "--content", fx.content, "--out", fx.out, "--json"]);
    expect(missingDb.code).toBe(2);
    expect(missingDb.stderr).toBe("");
    expect(JSON.parse(missingDb.stdout)).toEqual({
      ok: false,
      code: "usage",
      message: expect.stringContaining("does not exist"),
      errors: [],
    });
    // A flag missing altogether is commander's to report on stderr; stdout still gets the JSON.
    const missingFlag = await runCli(["build", "--content", fx.content, "--out", fx.out, "--json"]);
    expect(missingFlag.code).toBe(2);
    expect(JSON.parse(missingFlag.stdout)).toEqual({
      ok: false,
      code: "usage",
      message: "required option '--db <file>' not specified",
      errors: [],
    });
  });
});
