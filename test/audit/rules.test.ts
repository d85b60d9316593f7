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
