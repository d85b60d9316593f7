/**
 * D9: every bound checked at build time. Bad data fails the build with a
 * problem that says where (file:line, or table[key]) and what; nothing is
 * written: a previous tree stays byte-identical, and a first build leaves
 * `--out` absent.
 */
import { symlink, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { fileOf } from "../../src/api-paths.js";
import type { Db } from "../../src/db/open.js";
import { buildFixture, buildProblems, type Fixture, fixturesRemovedAfterEach, makeTempDir } from "../fixtures/build-fixture.js";
import { insertBlock, insertCategory, insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree, liveGenerationOf, pathExists, readTreeJson, stateDirOf } from "../fixtures/tree.js";

const { fixture, removeAfterEach } = fixturesRemovedAfterEach();

/** One organization `acme` with a category, a block and a valid post. */
async function baseFixture(): Promise<Fixture> {
  const fx = await fixture();
  withDb(fx.db, (db) => {
    insertOrg(db, { id: "acme", slug: "acme" });
    insertCategory(db, "acme", { id: "cat-news", slug: "news", value: "News" });
    insertBlock(db, "acme", {
      id: "hero",
      slug: "hero",
      fields: [{ key: "title", type: "text", value: "Hello" }],
      pages: ["home"],
    });
  });
  await writePost(fx.content, "acme/first.md", postMeta("post-1", { category: "news" }));
  return fx;
}

/** A post file from front matter lines (file line n+1 is lines[n-1]... line 1 is the opening ---). */
function rawPost(lines: readonly string[], body = "Body text.\n"): string {
  return ["---", ...lines, "---", body].join("\n");
}

const VALID_LINES = [
  "id: post-2", // line 2
  "title: Second post", // line 3
  "slug: second-post", // line 4
  "status: published", // line 5
  "publishedAt: 2026-01-05", // line 6
  "authorName: Grace Hopper", // line 7
];

/** VALID_LINES with the line for `key` replaced (or `extra` lines appended). */
function postLines(replace: Record<string, string> = {}, extra: readonly string[] = []): string[] {
  return [
    ...VALID_LINES.map((line) => {
      const key = line.slice(0, line.indexOf(":"));
      return key in replace ? replace[key]! : line;
    }),
    ...extra,
  ];
}

interface Case {
  name: string;
  apply: (fx: Fixture) => Promise<void> | void;
  /** Each expected problem: `where` exactly, and a fragment of its message. */
  expect: { where: string; message: RegExp }[];
}

const db = (fn: (db: Db) => void) => (fx: Fixture) => withDb(fx.db, fn);
const post = (rel: string, text: string) => async (fx: Fixture) => {
  await writePost(fx.content, rel, text);
};

const CASES: Case[] = [
  {
    name: "a post id with characters outside A-Z a-z 0-9 _ -",
    apply: post("acme/p.md", rawPost(postLines({ id: "id: bad.id!" }))),
    expect: [{ where: "acme/p.md:2", message: /^id: .*A-Z a-z 0-9 _ -/ }],
  },
  {
    name: "a post id starting with _",
    apply: post("acme/p.md", rawPost(postLines({ id: "id: _hidden" }))),
    expect: [{ where: "acme/p.md:2", message: /^id: / }],
  },
  {
    name: "a post id of 129 characters",
    apply: post("acme/p.md", rawPost(postLines({ id: `id: ${"a".repeat(129)}` }))),
    expect: [{ where: "acme/p.md:2", message: /^id: / }],
  },
  {
    name: "a block id with characters outside A-Z a-z 0-9 _ -",
    apply: db((d) => insertBlock(d, "acme", { id: "bad id", slug: "bad-id" })),
    expect: [{ where: "blocks[org_id=acme id=bad id]", message: /^id: / }],
  },
  {
    name: "a category id with characters outside A-Z a-z 0-9 _ -",
    apply: db((d) => insertCategory(d, "acme", { id: "cat/x", slug: "x", value: "X" })),
    expect: [{ where: "categories[org_id=acme id=cat/x]", message: /^id: / }],
  },
  {
    name: "an organization id with characters outside A-Z a-z 0-9 _ -",
    apply: db((d) => insertOrg(d, { id: "bad org", slug: "bad-org" })),
    expect: [{ where: "organizations[id=bad org]", message: /^id: / }],
  },
  {
    name: "a post id by-slug",
    apply: post("acme/p.md", rawPost(postLines({ id: "id: by-slug" }))),
    expect: [{ where: "acme/p.md:2", message: /^id: .*reserved/ }],
  },
  {
    name: "a block id by-slug",
    apply: db((d) => insertBlock(d, "acme", { id: "by-slug", slug: "some-block" })),
    expect: [{ where: "blocks[org_id=acme id=by-slug]", message: /^id: .*reserved/ }],
  },
  {
    name: "a post slug that is not lowercase words joined by single -",
    apply: post("acme/p.md", rawPost(postLines({ slug: "slug: Bad--Slug" }))),
    expect: [{ where: "acme/p.md:4", message: /^slug: / }],
  },
  {
    name: "a post slug of 201 characters",
    apply: post("acme/p.md", rawPost(postLines({ slug: `slug: ${"a".repeat(201)}` }))),
    expect: [{ where: "acme/p.md:4", message: /^slug: .*200/ }],
  },
  {
    name: "a block status that is none of the three, named with what was found",
    apply: db((d) => insertBlock(d, "acme", { id: "b3", slug: "b3", status: "live" })),
    expect: [{ where: "blocks[org_id=acme id=b3]", message: /^status: must be one of draft, published, archived, not "live"$/ }],
  },
  {
    name: "a block slug with an underscore",
    apply: db((d) => insertBlock(d, "acme", { id: "b2", slug: "bad_slug" })),
    expect: [{ where: "blocks[org_id=acme id=b2]", message: /^slug: / }],
  },
  {
    name: "two posts with the same id (both files named)",
    apply: post("acme/zz/dup.md", rawPost(postLines({ id: "id: post-1" }))),
    expect: [{ where: "acme/zz/dup.md:2", message: /^id: "post-1" is also used by acme\/first\.md:2$/ }],
  },
  {
    name: "two posts with the same slug (both files named)",
    apply: post("acme/zz/dup.md", rawPost(postLines({ slug: "slug: post-1" }))),
    expect: [{ where: "acme/zz/dup.md:4", message: /^slug: "post-1" is also used by acme\/first\.md:4$/ }],
  },
  {
    name: "a post whose category is no category of its organization",
    apply: post("acme/p.md", rawPost(postLines({}, ["category: gardening"]))),
    expect: [{ where: "acme/p.md:8", message: /^category: "gardening" is not a category of organization acme/ }],
  },
  {
    name: "an unknown front matter key",
    apply: post("acme/p.md", rawPost(postLines({}, ["summary: x", "colour: blue"]))),
    expect: [
      { where: "acme/p.md:8", message: /^summary: unknown key$/ },
      { where: "acme/p.md:9", message: /^colour: unknown key$/ },
    ],
  },
  {
    name: "an unknown key inside featuredImage",
    apply: post("acme/p.md", rawPost(postLines({}, ["featuredImage:", "  url: /a.jpg", "  alt: A", "  width: 3"]))),
    expect: [{ where: "acme/p.md:11", message: /^featuredImage\.width: unknown key$/ }],
  },
  {
    name: "a missing required key",
    apply: post("acme/p.md", rawPost(postLines().filter((l) => !l.startsWith("authorName")))),
    expect: [{ where: "acme/p.md:2", message: /^authorName: is required$/ }],
  },
  {
    name: "an empty title",
    apply: post("acme/p.md", rawPost(postLines({ title: 'title: ""' }))),
    expect: [{ where: "acme/p.md:3", message: /^title: / }],
  },
  {
    name: "a status that is not draft, published or archived",
    apply: post("acme/p.md", rawPost(postLines({ status: "status: scheduled" }))),
    expect: [{ where: "acme/p.md:5", message: /^status: / }],
  },
  {
    name: "a date that does not exist (2026-02-30)",
    apply: post("acme/p.md", rawPost(postLines({ publishedAt: "publishedAt: 2026-02-30" }))),
    expect: [{ where: "acme/p.md:6", message: /^publishedAt: / }],
  },
  {
    name: "a date-time that does not exist (25:00)",
    apply: post("acme/p.md", rawPost(postLines({ publishedAt: "publishedAt: 2026-02-03T25:00:00Z" }))),
    expect: [{ where: "acme/p.md:6", message: /^publishedAt: / }],
  },
  {
    name: "a featuredImage url starting with //host",
    apply: post("acme/p.md", rawPost(postLines({}, ["featuredImage:", "  url: //evil.example/a.jpg", "  alt: A"]))),
    expect: [{ where: "acme/p.md:9", message: /^featuredImage\.url: / }],
  },
  {
    name: "a relative featuredImage url",
    apply: post("acme/p.md", rawPost(postLines({}, ["featuredImage:", "  url: images/a.jpg", "  alt: A"]))),
    expect: [{ where: "acme/p.md:9", message: /^featuredImage\.url: / }],
  },
  {
    name: "a javascript: reference url",
    apply: post(
      "acme/p.md",
      rawPost(postLines({}, ["references:", "  - source: Fine", "    url: https://fine.example/a", "  - source: Evil", "    url: javascript:alert(1)"])),
    ),
    expect: [{ where: "acme/p.md:12", message: /^references\.1\.url: / }],
  },
  {
    name: "a reference url that is a site path",
    apply: post("acme/p.md", rawPost(postLines({}, ["references:", "  - source: Local", "    url: /about"]))),
    expect: [{ where: "acme/p.md:10", message: /^references\.0\.url: / }],
  },
  {
    name: "an asOf that is not a year",
    apply: post(
      "acme/p.md",
      rawPost(postLines({}, ["references:", "  - source: S", "    url: https://s.example/", "    asOf: last year"])),
    ),
    expect: [{ where: "acme/p.md:11", message: /^references\.0\.asOf: / }],
  },
  {
    name: "a field key of 65 characters",
    apply: db((d) => insertBlock(d, "acme", { id: "b2", slug: "b2", fields: [{ key: "k".repeat(65), type: "text", value: "x" }] })),
    expect: [{ where: "block_fields[org_id=acme block_id=b2 position=0]", message: /^key: / }],
  },
  {
    name: "a field key used twice in one block",
    apply: db((d) =>
      insertBlock(d, "acme", {
        id: "b2",
        slug: "b2",
        fields: [
          { key: "title", type: "text", value: "a" },
          { key: "title", type: "text", value: "b" },
        ],
      }),
    ),
    expect: [{ where: "block_fields[org_id=acme block_id=b2 position=1]", message: /^key: "title" is used twice in block b2$/ }],
  },
  {
    name: "a text value of 100001 code points",
    apply: db((d) =>
      insertBlock(d, "acme", { id: "b2", slug: "b2", fields: [{ key: "body", type: "text", value: "é".repeat(100_001) }] }),
    ),
    expect: [{ where: "block_fields[org_id=acme block_id=b2 position=0]", message: /^value: .*100000/ }],
  },
  {
    name: "a video status outside ready, processing, failed",
    apply: db((d) =>
      insertBlock(d, "acme", {
        id: "b2",
        slug: "b2",
        fields: [{ key: "clip", type: "video", value: { url: "/v.mp4", status: "encoding" } }],
      }),
    ),
    expect: [{ where: "block_fields[org_id=acme block_id=b2 position=0]", message: /^value\.status: / }],
  },
  {
    name: "an image url that is neither http(s) nor a site path",
    apply: db((d) =>
      insertBlock(d, "acme", {
        id: "b2",
        slug: "b2",
        fields: [{ key: "pic", type: "image", value: { url: "ftp://files.example/a.png", alt: "A" } }],
      }),
    ),
    expect: [{ where: "block_fields[org_id=acme block_id=b2 position=0]", message: /^value\.url: / }],
  },
  {
    name: "a field type outside text, image, video",
    apply: db((d) => insertBlock(d, "acme", { id: "b2", slug: "b2", fields: [{ key: "k", type: "audio", value: "x" }] })),
    expect: [{ where: "block_fields[org_id=acme block_id=b2 position=0]", message: /^type: / }],
  },
  {
    name: "a field value that is not JSON",
    apply: db((d) =>
      insertBlock(d, "acme", { id: "b2", slug: "b2", fields: [{ key: "k", type: "image", value: "{oops", raw: true }] }),
    ),
    expect: [
      {
        where: "block_fields[org_id=acme block_id=b2 position=0]",
        message: /^value: is not valid JSON \(found: \{oops\); an image field's value is a JSON object: \{"url": /,
      },
    ],
  },
  {
    name: "a text field stored without its quotes",
    apply: db((d) =>
      insertBlock(d, "acme", { id: "b2", slug: "b2", fields: [{ key: "title", type: "text", value: "Hello world", raw: true }] }),
    ),
    expect: [
      {
        where: "block_fields[org_id=acme block_id=b2 position=0]",
        message: /^value: is not valid JSON \(found: Hello world\); a text field's value is a JSON string, with its quotes: "Hello world"$/,
      },
    ],
  },
  {
    name: "a block status outside draft, published, archived",
    apply: db((d) => insertBlock(d, "acme", { id: "b2", slug: "b2", status: "live" })),
    expect: [{ where: "blocks[org_id=acme id=b2]", message: /^status: / }],
  },
  {
    name: "a post outside any organization folder",
    apply: post("stray.md", rawPost(postLines())),
    expect: [{ where: "stray.md", message: /outside any organization folder/ }],
  },
  {
    name: "an organization folder with no organization row",
    apply: post("ghost/p.md", rawPost(postLines())),
    expect: [{ where: "ghost/", message: /no organization has the id "ghost"/ }],
  },
  {
    name: "a symbolic link escaping the content folder",
    apply: async (fx) => {
      const outside = path.join(fx.dir, "outside");
      await mkdir(outside);
      await writeFile(path.join(outside, "p.md"), rawPost(postLines()));
      await mkdir(path.join(fx.content, "acme"), { recursive: true });
      await symlink(path.join(outside, "p.md"), path.join(fx.content, "acme", "linked.md"));
    },
    expect: [{ where: "acme/linked.md", message: /links outside the content folder/ }],
  },
  {
    name: "a symbolic link to a folder outside the content folder",
    apply: async (fx) => {
      const outside = path.join(fx.dir, "outside");
      await mkdir(outside);
      await writeFile(path.join(outside, "p.md"), rawPost(postLines()));
      await mkdir(path.join(fx.content, "acme"), { recursive: true });
      await symlink(outside, path.join(fx.content, "acme", "linked"));
    },
    // Refused at the link, which is not followed: a post in it would be outside too.
    expect: [{ where: "acme/linked", message: /links outside the content folder \(to .*outside\)/ }],
  },
  {
    name: "a draft post with a broken date (drafts are validated too)",
    apply: post("acme/p.md", rawPost(postLines({ status: "status: draft", publishedAt: "publishedAt: 2026-13-01" }))),
    expect: [{ where: "acme/p.md:6", message: /^publishedAt: / }],
  },
  {
    name: "an archived block with a broken field (unpublished blocks are validated too)",
    apply: db((d) =>
      insertBlock(d, "acme", {
        id: "b2",
        slug: "b2",
        status: "archived",
        fields: [{ key: "clip", type: "video", value: { url: "javascript:alert(1)", status: "ready" } }],
      }),
    ),
    expect: [{ where: "block_fields[org_id=acme block_id=b2 position=0]", message: /^value\.url: / }],
  },
];

function expectProblems(problems: { where: string; message: string }[], expected: Case["expect"]): void {
  for (const e of expected) {
    const found = problems.some((p) => p.where === e.where && e.message.test(p.message));
    expect(found, `expected ${e.where}: ${e.message} among\n${problems.map((p) => `${p.where}: ${p.message}`).join("\n")}`).toBe(
      true,
    );
  }
}

describe("D9: bad data fails the build and writes nothing", () => {
  test.each(CASES)("$name: reported with its place; the previous tree stays byte-identical", async (c) => {
    const fx = await baseFixture();
    await buildFixture(fx);
    const before = await hashTree(fx.out);
    const stateBefore = await hashTree(stateDirOf(fx.out));
    const genBefore = (await liveGenerationOf(fx.out)).id;

    await c.apply(fx);
    expectProblems(await buildProblems(fx), c.expect);
    expect(await hashTree(fx.out)).toBe(before);
    expect(await hashTree(stateDirOf(fx.out))).toBe(stateBefore);
    expect((await liveGenerationOf(fx.out)).id).toBe(genBefore);

    // The same data as a first build: --out and its state folder are never created.
    const fresh = path.join(fx.dir, "fresh", "site");
    expectProblems(await buildProblems(fx, { out: fresh }), c.expect);
    expect(await pathExists(fresh)).toBe(false);
    expect(await pathExists(stateDirOf(fresh))).toBe(false);
  });
});

describe("D9: values at the bounds build", () => {
  test("a text value of 100000 emoji (200000 UTF-16 units) is within bounds", async () => {
    const fx = await baseFixture();
    const value = "😀".repeat(100_000);
    withDb(fx.db, (d) => insertBlock(d, "acme", { id: "b2", slug: "b2", fields: [{ key: "body", type: "text", value }] }));
    await buildFixture(fx);
    const block = await readTreeJson<{ fields: { value: string }[] }>(fx.out, fileOf({ kind: "block", orgId: "acme", id: "b2" }));
    expect(block.fields[0]?.value).toBe(value);
  });

  test("an id of 128 characters, a slug of 200 and a field key of 64 build", async () => {
    const fx = await baseFixture();
    const id = `A${"b".repeat(127)}`;
    const slug = `${"a".repeat(99)}-${"b".repeat(100)}`;
    await writePost(fx.content, "acme/long.md", postMeta(id, { slug }));
    withDb(fx.db, (d) => insertBlock(d, "acme", { id: "b2", slug: "b2", fields: [{ key: "K".repeat(64), type: "text", value: "" }] }));
    await buildFixture(fx);
    const detail = await readTreeJson<{ id: string }>(fx.out, fileOf({ kind: "contentBySlug", orgId: "acme", slug }));
    expect(detail.id).toBe(id);
  });

  test("media urls may be absolute http(s) or site paths; a date-time without offset is accepted", async () => {
    const fx = await baseFixture();
    await writePost(
      fx.content,
      "acme/media.md",
      rawPost(
        postLines({ publishedAt: "publishedAt: 2026-01-05T10:00:00" }, [
          "featuredImage:",
          "  url: /images/a.jpg",
          "  alt: A",
          "references:",
          "  - source: S",
          "    url: http://s.example/a?b=c#d",
        ]),
      ),
    );
    withDb(fx.db, (d) =>
      insertBlock(d, "acme", {
        id: "b2",
        slug: "b2",
        fields: [
          { key: "pic", type: "image", value: { url: "https://cdn.example/a.png", alt: "" } },
          { key: "clip", type: "video", value: { url: "/v/a.mp4", status: "failed" } },
        ],
      }),
    );
    await expect(buildFixture(fx)).resolves.toMatchObject({ changed: true });
  });
});

describe("D9: every problem is listed at once", () => {
  test("a build with problems in several files and tables reports all of them", async () => {
    const fx = await baseFixture();
    await writePost(fx.content, "acme/a.md", rawPost(postLines({ id: "id: by-slug", slug: "slug: a-post" })));
    await writePost(fx.content, "acme/b.md", rawPost(postLines({ id: "id: b-post", publishedAt: "publishedAt: 2026-02-30" })));
    await writePost(fx.content, "acme/c.md", rawPost(postLines({ id: "id: c-post", slug: "slug: c-post" }, ["colour: red"])));
    withDb(fx.db, (d) => {
      insertBlock(d, "acme", { id: "by-slug", slug: "x" });
      insertBlock(d, "acme", { id: "b3", slug: "b3", fields: [{ key: "clip", type: "video", value: { url: "/v", status: "bad" } }] });
    });
    const problems = await buildProblems(fx);
    expectProblems(problems, [
      { where: "acme/a.md:2", message: /^id: / },
      { where: "acme/b.md:6", message: /^publishedAt: / },
      { where: "acme/c.md:8", message: /^colour: unknown key$/ },
      { where: "blocks[org_id=acme id=by-slug]", message: /^id: / },
      { where: "block_fields[org_id=acme block_id=b3 position=0]", message: /^value\.status: / },
    ]);
  });
});

test("a content folder that does not exist is a usage error, not a half build", async () => {
  const dir = await makeTempDir();
  removeAfterEach(dir);
  const fx = await baseFixture();
  await expect(buildFixture(fx, { content: path.join(dir, "missing") })).rejects.toThrow(/does not exist/);
  expect(await pathExists(fx.out)).toBe(false);
});
