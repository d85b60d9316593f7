/**
 * The audit's per-file inspection on bytes in hand: what it concludes about a
 * file must not depend on how the file spells its JSON. A canonical file is
 * proven canonical without being serialized again; any other spelling of the
 * same data gives the same facts (hashes of the canonical JSON) and is searched
 * for secrets in its canonical spelling.
 */
import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import { fileOf, type Route } from "../../src/api-paths.js";
import { inspectBytes } from "../../src/audit/audit-tree.js";
import { StoredSecret } from "../../src/audit/read-secrets.js";
import { needlesOf } from "../../src/audit/scan-secrets.js";
import { canonicalJson } from "../../src/render/canonical-json.js";

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
