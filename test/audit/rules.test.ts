/**
 * The pure parts of the audit: the cross-file rules over facts, and the secret
 * search. No files, no database.
 */
import { inspect } from "node:util";
import { describe, expect, test } from "vitest";
import { fileOf, type Route } from "../../src/api-paths.js";
import type { AuditExpectations, OrgExpectation } from "../../src/audit/audit-inputs.js";
import { StoredSecret } from "../../src/audit/read-secrets.js";
import { needlesOf, scanForSecrets } from "../../src/audit/scan-secrets.js";
import { checkTree, type FileFacts } from "../../src/audit/tree-rules.js";

const org = "acme";

function fact(route: Route, extra: Partial<FileFacts> = {}): FileFacts {
  return { rel: fileOf(route), route, hash: "h", ...extra };
}

function block(id: string, slug: string, hash = `b-${id}`): FileFacts[] {
  const item = { id, slug, hash, listHash: hash };
  return [
    fact({ kind: "block", orgId: org, id }, { hash, item }),
    fact({ kind: "blockBySlug", orgId: org, slug }, { hash, item }),
  ];
}

function base(blockItems: { id: string; slug: string; hash: string }[]): FileFacts[] {
  return [
    fact({ kind: "organization", orgId: org }, { ids: [org] }),
    fact({ kind: "categories", orgId: org }, { ids: [] }),
    fact({ kind: "blocks", orgId: org }, { items: blockItems }),
    fact({ kind: "contents", orgId: org }, { items: [] }),
    fact({ kind: "contentsPage", orgId: org, page: "1" }, { items: [], pagination: { page: 1, limit: 20, pages: 1, total: 0, next: null, prev: null } }),
  ];
}

function expecting(o: Partial<OrgExpectation>): AuditExpectations {
  return {
    orgIds: new Set([org]),
    orgs: [{ orgId: org, categoryIds: [], blocks: { published: [], hidden: [], source: "the database" }, posts: null, ...o }],
  };
}

describe("checkTree", () => {
  const facts = [...base([{ id: "b1", slug: "one", hash: "b-b1" }]), ...block("b1", "one")];

  test("a consistent tree with its expectations has no problem", () => {
    const exp = expecting({ blocks: { published: [{ id: "b1", slug: "one" }], hidden: [], source: "the database" } });
    expect(checkTree(facts, exp)).toEqual([]);
  });

  test("a file whose data names another item than its path is reported", () => {
    const [idFile] = block("b2", "two");
    const moved = { ...idFile!, rel: fileOf({ kind: "block", orgId: org, id: "b1" }), route: { kind: "block", orgId: org, id: "b1" } as Route };
    const exp = expecting({ blocks: { published: [{ id: "b1", slug: "one" }], hidden: [], source: "the database" } });
    const problems = checkTree([...base([{ id: "b1", slug: "one", hash: "b-b1" }]), moved, block("b1", "one")[1]!], exp);
    expect(problems).toContainEqual({
      where: fileOf({ kind: "block", orgId: org, id: "b1" }),
      message: expect.stringContaining('holds block "b2", but its path names block "b1"'),
    });
  });

  test("a list naming the same item twice is reported", () => {
    const twice = [...base([{ id: "b1", slug: "one", hash: "b-b1" }, { id: "b1", slug: "one", hash: "b-b1" }]), ...block("b1", "one")];
    expect(checkTree(twice, expecting({}))).toContainEqual({
      where: fileOf({ kind: "blocks", orgId: org }),
      message: expect.stringContaining('items.1 repeats block "b1" (already items.0)'),
    });
  });

  test("an item of no source, by id or in the list, is reported as not existing", () => {
    const problems = checkTree(facts, expecting({}));
    expect(problems).toContainEqual({
      where: fileOf({ kind: "block", orgId: org, id: "b1" }),
      message: expect.stringMatching(/^serves block "b1", which does not exist in the database: only published blocks/),
    });
    expect(problems).toContainEqual({
      where: fileOf({ kind: "blocks", orgId: org }),
      message: expect.stringMatching(/^items\.0 is block "b1", which does not exist in the database/),
    });
  });

  test("a category missing from, or extra in, the category list is reported", () => {
    const problems = checkTree(facts, expecting({ categoryIds: ["c1"], blocks: { published: [{ id: "b1", slug: "one" }], hidden: [], source: "the database" } }));
    expect(problems).toEqual([
      { where: fileOf({ kind: "categories", orgId: org }), message: expect.stringContaining('does not list category "c1"') },
    ]);
  });
});

describe("the pages of the lists", () => {
  const item = (n: number, category: string | null = null) => ({ id: `p${n}`, slug: `post-${n}`, hash: `h${n}`, category });
  /** Pages as a correct build writes them, of the list `items`, `limit` a page. */
  function pagesOf(items: ReturnType<typeof item>[], limit: number, route: (page: number) => Route): FileFacts[] {
    const pages = Math.max(1, Math.ceil(items.length / limit));
    return Array.from({ length: pages }, (_, i) => {
      const page = i + 1;
      const pagination = { page, limit, pages, total: items.length, next: page < pages ? page + 1 : null, prev: page > 1 ? page - 1 : null };
      return fact(route(page), { items: items.slice(i * limit, page * limit), pagination });
    });
  }
  const contentsPage = (page: number): Route => ({ kind: "contentsPage", orgId: org, page: String(page) });
  const newsPage = (page: number): Route => ({ kind: "categoryContentsPage", orgId: org, slug: "news", page: String(page) });
  const items = [item(1, "news"), item(2), item(3, "news"), item(4), item(5, "news")];
  function tree(edit: (pages: FileFacts[]) => FileFacts[] = (pages) => pages): FileFacts[] {
    return [
      fact({ kind: "organization", orgId: org }, { ids: [org] }),
      fact({ kind: "categories", orgId: org }, { ids: ["c1"], slugs: ["news"] }),
      fact({ kind: "blocks", orgId: org }, { items: [] }),
      fact({ kind: "contents", orgId: org }, { items }),
      ...edit([...pagesOf(items, 2, contentsPage), ...pagesOf(items.filter((i) => i.category === "news"), 2, newsPage)]),
    ];
  }
  const pageProblems = (facts: FileFacts[]) => checkTree(facts, expecting({})).filter((p) => p.where.includes("/page/"));
  const at = (route: Route) => fileOf(route);

  test("pages cut from the list as a build cuts them pass", () => {
    expect(pageProblems(tree())).toEqual([]);
  });

  test("a page missing, one past the last, and page 1 of a category are each reported", () => {
    const problems = pageProblems(
      tree((pages) => [
        ...pages.filter((p) => p.rel !== at(contentsPage(2)) && p.rel !== at(newsPage(1))),
        fact(contentsPage(4), { items: [], pagination: { page: 4, limit: 2, pages: 4, total: 5, next: null, prev: 3 } }),
      ]),
    );
    expect(problems.map((p) => p.where).sort()).toEqual([at(newsPage(1)), at(contentsPage(2)), at(contentsPage(4))].sort());
    expect(problems.find((p) => p.where === at(contentsPage(4)))?.message).toMatch(/^is past the last page: the contents list .* has 5 items, so 3 pages of 2/);
  });

  test("a page that is not the list's slice, or miscounts, is reported", () => {
    const problems = pageProblems(
      tree((pages) =>
        pages.map((p) => {
          if (p.rel === at(contentsPage(1))) return { ...p, items: [p.items![1]!, p.items![0]!] };
          if (p.rel === at(newsPage(2))) return { ...p, pagination: { ...p.pagination!, total: 4 } };
          if (p.rel === at(contentsPage(3))) return { ...p, items: [{ ...p.items![0]!, hash: "other" }] };
          return p;
        }),
      ),
    );
    expect(problems).toEqual([
      { where: at(contentsPage(1)), message: expect.stringMatching(/^does not hold items 0 to 1 of the contents list .*exact slice/) },
      { where: at(contentsPage(3)), message: expect.stringMatching(/^does not hold items 4 to 4 of the contents list/) },
      { where: at(newsPage(2)), message: expect.stringMatching(/^says meta.pagination .*"total":4.*; cut from the posts of category "news" .* it is .*"total":3/) },
    ]);
  });

  test("the pages of a category the categories list does not hold are reported", () => {
    const gone = fact({ kind: "categoryContentsPage", orgId: org, slug: "old", page: "1" }, { items: [], pagination: { page: 1, limit: 2, pages: 1, total: 0, next: null, prev: null } });
    expect(pageProblems(tree((pages) => [...pages, gone]))).toEqual([
      { where: gone.rel, message: expect.stringMatching(/^is a page of category "old", which .*categories.json does not list/) },
    ]);
  });
});

describe("secrets", () => {
  test("a stored secret shows its organization and name, never its value, when printed or serialized", () => {
    const secret = new StoredSecret("acme", "api_token", "tok_VALUE_123456");
    expect(secret.value).toBe("tok_VALUE_123456");
    expect(JSON.stringify(secret)).toBe('{"orgId":"acme","name":"api_token"}');
    expect(inspect(secret)).not.toContain("tok_VALUE_123456");
  });

  test("each secret is searched as stored and JSON-escaped; short ones only warn", () => {
    const { needles, warnings } = needlesOf([
      new StoredSecret("acme", "quote", 'pa"ss\\word-123'),
      new StoredSecret("acme", "plain", "plain-secret-1"),
      new StoredSecret("acme", "pin", "12345"),
    ]);
    expect(needles.map((n) => `${n.name}:${n.form}`)).toEqual(["quote:as stored", "quote:JSON-escaped", "plain:as stored"]);
    expect(warnings).toEqual([{ where: "organization_secrets[org_id=acme name=pin]", message: expect.stringContaining("shorter than 6") }]);

    const file = Buffer.from(JSON.stringify({ a: 'pa"ss\\word-123', b: "plain-secret-1" }));
    const problems = scanForSecrets("f.json", file, needles);
    expect(problems.map((p) => p.message.split(";")[0])).toEqual([
      'holds the value of secret "quote" of organization acme (JSON-escaped)',
      'holds the value of secret "plain" of organization acme (as stored)',
    ]);
    expect(JSON.stringify(problems)).not.toContain("plain-secret-1");
  });
});
