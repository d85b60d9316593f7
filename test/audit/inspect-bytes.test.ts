/**
 * The audit's per-file inspection on bytes in hand: what it concludes about a
 * file must not depend on how the file spells its JSON. A canonical file is
 * proven canonical without being serialized again; any other spelling of the
 * same data gives the same facts (hashes of the canonical JSON) and is searched
 * for secrets in its canonical spelling.
 */
import { createHash } from "node:crypto";
import { describe, expect, test, vi } from "vitest";
import { fileOf, type Route } from "../../src/api-paths.js";
import { inspectBytes } from "../../src/audit/audit-tree.js";
import { createInspector } from "../../src/audit/inspector.js";
import { StoredSecret } from "../../src/audit/read-secrets.js";
import { needlesOf } from "../../src/audit/scan-secrets.js";
import { canonicalJson } from "../../src/render/canonical-json.js";
import { itemsBytes, itemViews, pagesOf } from "../../src/render/pages.js";

const org = "acme";
const orgIds = new Set([org]);
const SECRET = "sk_live_0123456789";
const { needles } = needlesOf([new StoredSecret(org, "stripe_key", SECRET)]);

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hashOf = (json: unknown) => sha(canonicalJson(json));

function summary(id: string, title: string) {
  return {
    id,
    title,
    slug: `${id}-slug`,
    excerpt: `About ${title} — “quoted”, </script> and a \\ backslash`,
    categoryName: null,
    categorySlug: null,
    authorName: "Ada Lovelace 😀",
    publishedAt: "2024-05-06",
    featuredImage: { url: "https://example.com/a.png", alt: "[an image]" },
    seoMetadata: { title, description: 'brackets ] } and quotes " inside' },
    tags: ["a", "b]"],
  };
}
function detail(id: string, title: string) {
  return { ...summary(id, title), content: `# ${title}\n\nBody with "quotes", \\ and ]} and \u2028.`, references: [{ source: "S", url: "https://s", claim: "c" }] };
}
function block(id: string) {
  return {
    id,
    slug: `${id}-slug`,
    name: `Block ${id}`,
    status: "published",
    fields: [
      { key: "hero", type: "image", value: { url: "https://example.com/h.png", alt: "{hero}" } },
      { key: "text", type: "text", value: 'a "b" [c]' },
    ],
  };
}

const routes = {
  content: { kind: "content", orgId: org, id: "p1" },
  contents: { kind: "contents", orgId: org },
  block: { kind: "block", orgId: org, id: "b1" },
  blocks: { kind: "blocks", orgId: org },
} satisfies Record<string, Route>;

const files: [Route, unknown][] = [
  [routes.content, detail("p1", "First")],
  [routes.contents, { items: [summary("p1", "First"), summary("p2", "Ünïcode “second”"), summary("p3", "Third ]}")] }],
  [routes.block, block("b1")],
  [routes.blocks, { items: [block("b1"), block("b2")] }],
  [routes.blocks, { items: [] }],
];

/** The same data spelled otherwise: whitespace, keys in another order, escapes a canonical file never has. */
const respellings: [string, (json: unknown) => string][] = [
  ["indented", (json) => JSON.stringify(json, null, 2)],
  ["keys in render order", (json) => JSON.stringify(json)],
  ["every s as \\u0073", (json) => canonicalJson(json).replaceAll("s", "\\u0073")],
  ["slashes escaped", (json) => canonicalJson(json).replaceAll("/", "\\/")],
  ["with a byte order mark", (json) => `\ufeff${canonicalJson(json)}`],
];

describe("inspectBytes", () => {
  test("a canonical file: its hash is its bytes', each list item's that of its canonical JSON", () => {
    for (const [route, json] of files) {
      const bytes = Buffer.from(canonicalJson(json), "utf8");
      const result = inspectBytes(fileOf(route), bytes, orgIds, needles);
      expect(result.problems).toEqual([]);
      expect(result.facts?.hash).toBe(sha(bytes));
      const items = (json as { items?: unknown[] }).items;
      if (items) expect(result.facts?.items?.map((i) => i.hash)).toEqual(items.map(hashOf));
      if (route.kind === "content") {
        const { content: _c, references, ...rest } = json as ReturnType<typeof detail>;
        expect(result.facts?.item).toEqual({ id: "p1", slug: "p1-slug", hash: sha(bytes), listHash: hashOf(rest), referencesHash: hashOf(references) });
      }
    }
  });

  test("the same data spelled otherwise gives the same facts", () => {
    for (const [route, json] of files) {
      const canonical = inspectBytes(fileOf(route), Buffer.from(canonicalJson(json), "utf8"), orgIds, needles);
      for (const [how, spell] of respellings) {
        const text = spell(json);
        if (text === canonicalJson(json)) continue; // `{"items":[]}` has no slash to escape
        const result = inspectBytes(fileOf(route), Buffer.from(text, "utf8"), orgIds, needles);
        expect(result, `${fileOf(route)} ${how}`).toEqual(canonical);
      }
    }
  });

  test("a secret is found however the file spells it", () => {
    const json = detail("p1", `Leaked ${SECRET} here`);
    for (const [how, spell] of [["canonical", canonicalJson] as const, ...respellings]) {
      const result = inspectBytes(fileOf(routes.content), Buffer.from(spell(json), "utf8"), orgIds, needles);
      expect(result.problems.map((p) => p.message), how).toEqual([expect.stringContaining('holds the value of secret "stripe_key" of organization acme')]);
    }
    // Only escapes hide it from the bytes: `\u0073k_live_…`.
    const hidden = canonicalJson(json).replaceAll(SECRET, `\\u0073${SECRET.slice(1)}`);
    expect(hidden).not.toContain(SECRET);
    const result = inspectBytes(fileOf(routes.content), Buffer.from(hidden, "utf8"), orgIds, needles);
    expect(result.problems).toHaveLength(1);
  });

  test("bytes that are not UTF-8, or not JSON, fail with what they are", () => {
    const rel = fileOf(routes.block);
    const notUtf8 = Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(inspectBytes(rel, notUtf8, orgIds, needles).problems).toEqual([{ where: rel, message: expect.stringMatching(/^is not valid UTF-8 text;/) }]);
    expect(inspectBytes(rel, Buffer.from('{"id":'), orgIds, needles).problems).toEqual([
      { where: rel, message: expect.stringMatching(/^is not valid JSON \(.+\); rebuild the tree with cdsnap build$/) },
    ]);
  });
});

/** Every JSON text the code under test parses while `run` runs: what an inspection read whole. */
function parsedTexts<T>(run: () => T): { result: T; parsed: string[] } {
  const parsed: string[] = [];
  const parse = JSON.parse;
  const spy = vi.spyOn(JSON, "parse").mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    parsed.push(text);
    return parse(text, reviver);
  });
  try {
    return { result: run(), parsed };
  } finally {
    spy.mockRestore();
  }
}

describe("createInspector: a list's pages, assembled from its items", () => {
  const items = Array.from({ length: 7 }, (_, i) => summary(`p${i + 1}`, `Post ${i + 1} ]},{`));
  const itemBytes = items.map((item) => Buffer.from(canonicalJson(item), "utf8"));
  const list = itemsBytes(itemBytes, "]}");
  const views = itemViews(list, itemBytes);
  const listRel = fileOf(routes.contents);
  const pageRel = (page: number) => fileOf({ kind: "contentsPage", orgId: org, page: String(page) });
  const pages = pagesOf(views, 3);

  test("once the list is inspected, each page gets the facts a whole inspection gives, without its items parsed again", () => {
    const inspect = createInspector(orgIds, needles, "public");
    expect(inspect(listRel, list, { items: views, tail: "]}" })).toEqual(inspectBytes(listRel, list, orgIds, needles));
    for (const { page, bytes, parts } of pages) {
      const pageBytes = bytes();
      const { result, parsed } = parsedTexts(() => inspect(pageRel(page), pageBytes, parts));
      expect(result).toEqual(inspectBytes(pageRel(page), pageBytes, orgIds, needles));
      expect(result.facts?.items?.map((i) => i.id)).toEqual(parts.items.map((item) => JSON.parse(item.toString("utf8")).id));
      // The page's own head and tail alone: `{"items":[],"meta":…}`.
      expect(parsed.length).toBeGreaterThan(0);
      expect(parsed.every((text) => text.startsWith('{"items":[]'))).toBe(true);
    }
  });

  test("a page whose bytes are not the items it names is inspected whole, and what is wrong is found", () => {
    const inspect = createInspector(orgIds, needles, "public");
    inspect(listRel, list, { items: views, tail: "]}" });
    const { parts } = pages[0]!;
    const leaked = { ...items[0]!, secret: SECRET };
    const tampered = itemsBytes([Buffer.from(canonicalJson(leaked)), ...parts.items.slice(1)], parts.tail);
    const result = inspect(pageRel(1), tampered, parts);
    expect(result).toEqual(inspectBytes(pageRel(1), tampered, orgIds, needles));
    expect(result.problems.map((p) => p.message)).toEqual([
      expect.stringContaining('holds the value of secret "stripe_key"'),
      expect.stringContaining("does not match the content page response"),
    ]);
  });

  test("a page's own tail is checked: a member the interface does not name fails it", () => {
    const inspect = createInspector(orgIds, needles, "public");
    inspect(listRel, list, { items: views, tail: "]}" });
    const { parts } = pages[1]!;
    const tail = parts.tail.replace('"pagination"', '"extra":1,"pagination"');
    const bytes = itemsBytes(parts.items, tail);
    const result = inspect(pageRel(2), bytes, { items: parts.items, tail });
    expect(result.problems).toEqual([{ where: pageRel(2), message: expect.stringContaining("does not match the content page response") }]);
  });

  test("items of a list that failed its inspection are not known: a page of them is inspected whole", () => {
    const inspect = createInspector(orgIds, needles, "public");
    const leaky = [...itemBytes.slice(0, 2), Buffer.from(canonicalJson({ ...items[2]!, excerpt: `has ${SECRET}` }))];
    const leakyList = itemsBytes(leaky, "]}");
    const leakyViews = itemViews(leakyList, leaky);
    expect(inspect(listRel, leakyList, { items: leakyViews, tail: "]}" }).problems).toHaveLength(1);
    const [first] = pagesOf(leakyViews, 3);
    const pageBytes = first!.bytes();
    const { result, parsed } = parsedTexts(() => inspect(pageRel(1), pageBytes, first!.parts));
    expect(result.problems).toEqual([{ where: pageRel(1), message: expect.stringContaining('holds the value of secret "stripe_key"') }]);
    expect(parsed).toContain(pageBytes.toString("utf8"));
  });
});

describe("createInspector: a rewritten list, against what the last audit recorded of it", () => {
  const listRel = fileOf(routes.contents);
  const posts = Array.from({ length: 100 }, (_, i) => summary(`p${i + 1}`, `Post ${i + 1}`));
  const bytesOf = (json: unknown) => Buffer.from(canonicalJson(json), "utf8");
  const listOf = (items: readonly unknown[]) => {
    const itemBytes = items.map(bytesOf);
    const bytes = itemsBytes(itemBytes, "]}");
    return { bytes, parts: { items: itemViews(bytes, itemBytes), tail: "]}" } };
  };
  const before = listOf(posts);
  const recordedFacts = inspectBytes(listRel, before.bytes, orgIds, needles).facts!;
  const recorded = (rel: string) => (rel === listRel ? recordedFacts : undefined);

  test("a post added and one gone: only the new item is parsed, and the facts are those of a whole inspection", () => {
    const added = summary("p999", "A new post");
    const now = listOf([added, ...posts.slice(0, 50), ...posts.slice(51)]);
    const inspect = createInspector(orgIds, needles, "public", recorded);
    const { result, parsed } = parsedTexts(() => inspect(listRel, now.bytes, now.parts));
    expect(result).toEqual(inspectBytes(listRel, now.bytes, orgIds, needles));
    expect(parsed.filter((text) => text.includes('"id":"p'))).toEqual([`{"items":[${canonicalJson(added)}]}`]);
  });

  test.each([
    ["a secret in it", 3, { excerpt: `now with ${SECRET}` }, 'holds the value of secret "stripe_key"'],
    ["a member the interface does not name", 7, { internalNote: "not in the interface" }, "does not match the content list response"],
  ])("an item with a recorded id but other bytes is checked again: %s fails the list as a whole inspection does", (_, at, change, message) => {
    const now = listOf(posts.map((post, i) => (i === at ? { ...post, ...change } : post)));
    const inspect = createInspector(orgIds, needles, "public", recorded);
    const result = inspect(listRel, now.bytes, now.parts);
    expect(result).toEqual(inspectBytes(listRel, now.bytes, orgIds, needles));
    expect(result.problems).toEqual([{ where: listRel, message: expect.stringContaining(message) }]);
  });

  test("a list of mostly new items is checked whole, once", () => {
    const fresh = Array.from({ length: 100 }, (_, i) => summary(`n${i}`, `New ${i}`));
    const now = listOf(fresh);
    const inspect = createInspector(orgIds, needles, "public", recorded);
    const { result, parsed } = parsedTexts(() => inspect(listRel, now.bytes, now.parts));
    expect(result).toEqual(inspectBytes(listRel, now.bytes, orgIds, needles));
    expect(parsed).toEqual([now.bytes.toString("utf8")]);
  });
});
