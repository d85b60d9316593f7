/**
 * schemas/openapi.json against the route table it is generated from, a
 * maintained linter, and the server's own rules for request bodies. That every
 * answer the server suites receive conforms is checked as they run
 * (test/fixtures/openapi-recorder.ts); the oracle that judges them is tested here.
 */
import { createConfig, lintFromString } from "@redocly/openapi-core";
import Ajv2020 from "ajv/dist/2020.js";
import fc from "fast-check";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ERROR_STATUS, OPERATIONS, PARAMS, ROUTES, ROUTE_KINDS, methodsOf } from "../../src/route-table.js";
import { businessDescriptionBody, businessOffersBody } from "../../src/model/business.js";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { OpenApiOracle } from "../fixtures/openapi-oracle.js";
import { fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { unjudged } from "../fixtures/openapi-recording.js";

const root = path.resolve(import.meta.dirname, "../..");
const docFile = path.join(root, "schemas/openapi.json");

type Json = Record<string, unknown>;
interface Doc {
  paths: Record<string, Json & { parameters: { $ref: string }[] }>;
  components: { parameters: Record<string, { schema: Json }>; schemas: Record<string, Json>; responses: Record<string, Json> };
}
const loadDoc = async () => JSON.parse(await readFile(docFile, "utf8")) as Doc;

function deref(doc: Doc, value: unknown): Json {
  let v = value as Json;
  while (typeof v?.$ref === "string") {
    v = (v.$ref as string)
      .slice(2)
      .split("/")
      .reduce<unknown>((node, key) => (node as Json)[key], doc) as Json;
  }
  return v;
}

describe("the OpenAPI document is the route table", () => {
  it("has one path per route, with the route's methods, and Allow on the others", async () => {
    const doc = await loadDoc();
    expect(Object.keys(doc.paths).sort()).toEqual(ROUTE_KINDS.map((k) => ROUTES[k].path).sort());
    for (const kind of ROUTE_KINDS) {
      const item = doc.paths[ROUTES[kind].path]!;
      const methods = ["get", "head", "patch", "options", "put", "post", "delete"].filter((m) => m in item);
      expect(methods.map((m) => m.toUpperCase()), kind).toEqual(methodsOf(kind));
      const notAllowed = item["x-method-not-allowed"] as { headers: { Allow: { schema: Json } } };
      expect(notAllowed.headers.Allow.schema).toEqual({ const: methodsOf(kind).join(", ") });
    }
  });

  it("gives every operation the statuses the table gives its method, a body on each but HEAD's, and a description", async () => {
    const doc = await loadDoc();
    for (const kind of ROUTE_KINDS) {
      const item = doc.paths[ROUTES[kind].path]!;
      const operations = OPERATIONS[ROUTES[kind].access] as Record<string, readonly (keyof typeof ERROR_STATUS)[]>;
      for (const [method, codes] of Object.entries(operations)) {
        const op = item[method.toLowerCase()] as { responses: Record<string, unknown>; description?: string; summary?: string };
        const success = method === "OPTIONS" ? ["204"] : method === "PATCH" ? ["200"] : ["200", "304"];
        const errors = [...new Set(codes.map((c) => String(ERROR_STATUS[c])))];
        expect(Object.keys(op.responses).sort(), `${method} ${kind}`).toEqual([...success, ...errors].sort());
        expect(op.description?.length, `${method} ${kind} has a description`).toBeGreaterThan(20);
        for (const [status, ref] of Object.entries(op.responses)) {
          const response = deref(doc, ref);
          const hasBody = response.content !== undefined;
          expect(hasBody, `${method} ${kind} ${status} body`).toBe(method !== "HEAD" && status !== "304" && status !== "204");
          if (!hasBody || Number(status) < 400) continue;
          // The body names exactly the codes of this status.
          const schema = deref(doc, (response.content as Record<string, { schema: Json }>)["application/json"]!.schema) as {
            properties: { error: { properties: { code: { const?: string; enum?: string[] } } } };
          };
          const code = schema.properties.error.properties.code;
          expect((code.enum ?? [code.const]).sort(), `${method} ${kind} ${status}`).toEqual(
            codes.filter((c) => String(ERROR_STATUS[c]) === status).sort(),
          );
        }
      }
    }
  });

  it("spells each parameter as the table does, the reserved id excluded", async () => {
    const doc = await loadDoc();
    for (const [name, spec] of Object.entries(PARAMS)) {
      const expected: Json = { type: "string", pattern: spec.pattern.source };
      if ("maxLength" in spec) expected.maxLength = spec.maxLength;
      if ("reserved" in spec) expected.not = { const: spec.reserved };
      expect(doc.components.parameters[name]!.schema, name).toEqual(expected);
    }
  });

  it("lints clean under Redocly's recommended-strict rules, a description on every operation required", async () => {
    const config = await createConfig({
      extends: ["recommended-strict"],
      rules: {
        "operation-description": "error",
        // The rule compares templates only: `contents/by-slug/{slug}` and `contents/{contentId}/references`
        // overlap as text, but `contentId` excludes `by-slug`; the next test proves no path matches both.
        "no-ambiguous-paths": "off",
      },
    });
    const problems = await lintFromString({ source: await readFile(docFile, "utf8"), absoluteRef: "openapi.json", config });
    expect(problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  });

  it("no path can match two templates: the parameter schemas keep them apart, and without the reserved id they would not", async () => {
    const doc = await loadDoc();
    const ajv = new Ajv2020.default({ strict: false });
    const overlapping = (paramsOf: (p: { $ref: string }) => Json) => {
      const templates = Object.entries(doc.paths).map(([t, item]) => {
        const params = item.parameters.map(paramsOf) as { name: string; schema: Json }[];
        return t.split("/").map((s) => (s.startsWith("{") ? params.find((p) => `{${p.name}}` === s)!.schema : s));
      });
      const pairs: string[] = [];
      templates.forEach((a, i) =>
        templates.slice(i + 1).forEach((b) => {
          if (a.length !== b.length) return;
          const apart = a.some((x, k) => {
            const y = b[k]!;
            if (typeof x === "string" && typeof y === "string") return x !== y;
            if (typeof x === "string") return !ajv.validate(y, x);
            if (typeof y === "string") return !ajv.validate(x, y);
            return false;
          });
          if (!apart) pairs.push(`${a.join("/")} ~ ${b.join("/")}`);
        }),
      );
      return pairs;
    };
    expect(overlapping((p) => deref(doc, p))).toEqual([]);
    const withoutReserved = (p: { $ref: string }) => {
      const param = structuredClone(deref(doc, p)) as { schema: Json };
      delete param.schema.not;
      return param;
    };
    expect(overlapping(withoutReserved).length).toBeGreaterThan(0);
  });
});

describe("the request schemas refuse what the server refuses", () => {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  let validate: { description: (v: unknown) => boolean; offers: (v: unknown) => boolean } | undefined;
  async function schemas() {
    if (!validate) {
      const doc = await loadDoc();
      ajv.addSchema({ $id: "urn:cdsnap:doc", components: doc.components });
      const description = ajv.compile({ $ref: "urn:cdsnap:doc#/components/schemas/BusinessDescriptionBody" });
      const offers = ajv.compile({ $ref: "urn:cdsnap:doc#/components/schemas/BusinessOffersBody" });
      validate = { description: (v) => description(v), offers: (v) => offers(v) };
    }
    return validate;
  }
  const offer = (o: Json) => ({ businessOffers: [{ name: "Beans", description: "Fresh", ...o }] });

  it.each([
    ["a link HTTP:// without a host", offer({ link: "HTTP://" })],
    ["a link with credentials", offer({ link: "https://user:secret@example.com/" })],
    ["a link with a user name", offer({ link: "http://user@example.com" })],
    ["a link that is not http(s)", offer({ link: "javascript:alert(1)" })],
    ["a link holding a space", offer({ link: "https://exa mple.com" })],
    ["a link holding a tab", offer({ link: "https://example.com/\tx" })],
    ["a link of 2049 characters", offer({ link: `https://example.com/${"a".repeat(2029)}` })],
    ["a name of spaces", offer({ name: "   " })],
    ["a name of no-break spaces and a line break", offer({ name: "\u00a0\n\u3000" })],
    ["a name of 121 characters", offer({ name: "n".repeat(121) })],
    ["a description holding U+0085", offer({ description: "a\u0085b" })],
    ["a description holding a lone CR", offer({ description: "a\rb" })],
    ["a description holding a lone surrogate", offer({ description: "a\ud800b" })],
    ["an offer without a description", { businessOffers: [{ name: "Beans" }] }],
    ["an offer with a member the interface does not name", offer({ price: 3 })],
    ["51 offers", { businessOffers: Array.from({ length: 51 }, () => ({ name: "n", description: "d" })) }],
    ["a body with another member", { businessOffers: [], extra: true }],
  ])("business-offers: %s", async (_, body) => {
    expect(businessOffersBody.safeParse(body).success).toBe(false);
    expect((await schemas()).offers(body)).toBe(false);
  });

  it.each([
    ["U+0085", { businessDescription: "a\u0085b" }],
    ["DEL", { businessDescription: "a\u007fb" }],
    ["NUL", { businessDescription: "\u0000" }],
    ["10,001 characters", { businessDescription: "d".repeat(10_001) }],
    ["a number", { businessDescription: 3 }],
    ["no member", {}],
  ])("business-description: %s", async (_, body) => {
    expect(businessDescriptionBody.safeParse(body).success).toBe(false);
    expect((await schemas()).description(body)).toBe(false);
  });

  it("accepts what the server accepts: emoji, tab, CR LF, and a link with a port, a path and a query", async () => {
    const body = offer({ name: "Beans ☕ 𝄞", description: "line\r\nnext\tcolumn", link: "https://shop.example.com:8443/a?b=c#d" });
    expect(businessOffersBody.safeParse(body).success).toBe(true);
    expect((await schemas()).offers(body)).toBe(true);
  });

  it("on any text, the schema refuses every value the server refuses, and accepts every value the server stores", async () => {
    const { description } = await schemas();
    const chars = ["a", " ", "\t", "\n", "\r", "\u0000", "\u001f", "\u007f", "\u0085", "\u00a0", "\u2028", "\ud800", "\udc00", "é", "😀"];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...chars), { maxLength: 12 }), async (parts) => {
        const text = parts.join("");
        const server = businessDescriptionBody.safeParse({ businessDescription: text });
        if (!server.success) expect(description({ businessDescription: text }), JSON.stringify(text)).toBe(false);
        else expect(description(server.data), JSON.stringify(server.data)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("the oracle that judges every answer in the server suites", () => {
  const oracle = new OpenApiOracle();
  const etag = `"${"a".repeat(64)}"`;
  const fileHeaders = {
    etag,
    "cache-control": "public, max-age=60, stale-while-revalidate=600",
    "cache-tag": "org:demo,categories:demo",
    vary: "x-api-key, Origin, Accept-Encoding",
    "last-modified": "Sun, 01 Nov 2026 00:00:00 GMT",
    "accept-ranges": "none",
    "content-type": "application/json; charset=utf-8",
  };
  const categories = Buffer.from(JSON.stringify({ items: [{ id: "c1", slug: "news", value: "News" }] }));
  const base = { method: "GET", url: "/api/organizations/demo/categories", status: 200, headers: fileHeaders, body: categories };

  it("passes a conforming answer and fails each kind of departure", () => {
    expect(oracle.check(base)).toEqual([]);
    expect(oracle.check({ ...base, status: 405 })).toEqual([expect.stringContaining("405 is not documented")]);
    expect(oracle.check({ ...base, method: "HEAD" })).toEqual([expect.stringContaining("declares no body")]);
    expect(oracle.check({ ...base, headers: { ...fileHeaders, etag: "W/\"x\"" } })).toEqual([expect.stringContaining("header ETag")]);
    const gzipped = { ...fileHeaders, etag: `"${"a".repeat(64)}-gzip"`, "content-encoding": "gzip" };
    expect(oracle.check({ ...base, headers: gzipped, body: gzipSync(categories) })).toEqual([]);
    expect(oracle.check({ ...base, headers: gzipped, body: categories })).toEqual([expect.stringContaining("not valid gzip")]);
    expect(oracle.check({ ...base, headers: { ...gzipped, "content-encoding": "deflate" }, body: deflateSync(categories) })).toEqual([
      expect.stringContaining("header Content-Encoding"),
      expect.stringContaining("coding deflate"),
    ]);
    const { "cache-tag": _, ...untagged } = fileHeaders;
    expect(oracle.check({ ...base, headers: untagged })).toEqual([expect.stringContaining("Cache-Tag is required")]);
    // A preview key's answer: no shared cache keeps it, and so it carries no tag to purge it by.
    const privately = { ...untagged, "cache-control": "private, no-store" };
    expect(oracle.check({ ...base, headers: privately })).toEqual([]);
    expect(oracle.check({ ...base, headers: { ...privately, "cache-tag": fileHeaders["cache-tag"] } })).toEqual([
      expect.stringContaining("Cache-Tag must be absent"),
    ]);
    const leaky = Buffer.from(JSON.stringify({ items: [{ id: "c1", slug: "news", value: "News", secret: "x" }] }));
    expect(oracle.check({ ...base, body: leaky })).toEqual([expect.stringContaining("the body")]);
    const wrongCode = Buffer.from(JSON.stringify({ error: { code: "not_found", message: "m" } }));
    const errorHeaders = { "cache-control": "no-store", vary: "x-api-key, Origin", "content-type": "application/json" };
    expect(oracle.check({ ...base, status: 403, headers: errorHeaders, body: wrongCode })).toEqual([
      expect.stringContaining("the body"),
    ]);
  });

  it("holds a 405 to the path's methods, and a PATCH's bodies to the request schema", () => {
    const notAllowed = Buffer.from(JSON.stringify({ error: { code: "method_not_allowed", message: "m" } }));
    const headers = { "cache-control": "no-store", vary: "x-api-key, Origin", "content-type": "application/json" };
    const post = { method: "POST", url: "/api/organizations/demo/categories", status: 405, body: notAllowed };
    expect(oracle.check({ ...post, headers: { ...headers, allow: "GET, HEAD, OPTIONS" } })).toEqual([]);
    expect(oracle.check({ ...post, headers: { ...headers, allow: "GET, HEAD, PATCH, OPTIONS" } })).toHaveLength(1);
    const refused = Buffer.from(JSON.stringify({ error: { code: "validation_failed", message: "m", details: [{ path: "p", message: "m" }] } }));
    const patch = { method: "PATCH", url: "/api/organizations/demo/business-description", status: 422, headers, body: refused };
    expect(oracle.check({ ...patch, requestBody: Buffer.from('{"businessDescription":"a\\u0085b"}') })).toEqual([]);
    expect(oracle.check({ ...patch, requestBody: Buffer.from('{"businessDescription":"fine"}') })).toEqual([
      expect.stringContaining("the document's schema accepts it"),
    ]);
  });
});

describe("one change to the table changes the build, the audit, the server, the document and the client together", () => {
  const { fixture } = fixturesRemovedAfterEach();
  afterEach(() => {
    vi.doUnmock("../../src/route-table.js");
    vi.resetModules();
  });

  it("categories moved to /topics and precondition_failed made 409", async () => {
    vi.resetModules();
    vi.doMock("../../src/route-table.js", async (importOriginal) => {
      const table = await importOriginal<typeof import("../../src/route-table.js")>();
      return {
        ...table,
        ROUTES: { ...table.ROUTES, categories: { ...table.ROUTES.categories, path: "/api/organizations/{orgId}/topics" } },
        ERROR_STATUS: { ...table.ERROR_STATUS, precondition_failed: 409 },
      };
    });
    const { parseApiPath, fileOf, routeOfFile } = await import("../../src/api-paths.js");
    const { openApiDocument } = await import("../../src/contract/openapi.js");
    const { startServer } = await import("../../src/server/create-server.js");
    const { createClient } = await import("../../src/client/create-client.js");
    const { build } = await import("../../src/build.js");

    expect(parseApiPath("/api/organizations/demo/topics")).toEqual({ kind: "categories", orgId: "demo" });
    expect(parseApiPath("/api/organizations/demo/categories")).toBeNull();
    expect(routeOfFile("api/organizations/demo/categories.json")).toBeNull();
    expect(fileOf({ kind: "categories", orgId: "demo" })).toBe("api/organizations/demo/topics.json");

    // The build writes the file where the table says and its audit passes it.
    const fx = await fixture({ demo: true });
    await build({ db: fx.db, content: fx.content, out: fx.out });
    const server = await startServer({ db: fx.db, out: fx.out, port: 0, log: () => undefined });
    // This server answers a table the committed document does not describe, on purpose.
    await unjudged(async () => {
      const client = createClient({ baseUrl: server.url, apiKey: DEMO_READ_KEY, orgId: "demo" });
      expect((await client.categories()).items.length).toBeGreaterThan(0);
      const old = await fetch(`${server.url}/api/organizations/demo/categories`, { headers: { "x-api-key": DEMO_READ_KEY } });
      expect(old.status).toBe(404);
      const stale = await fetch(`${server.url}/api/organizations/demo/business-description`, {
        method: "PATCH",
        headers: { "x-api-key": DEMO_WRITE_KEY, "content-type": "application/json", "if-match": '"stale"' },
        body: JSON.stringify({ businessDescription: "x" }),
      });
      expect(stale.status).toBe(409);
    }).finally(() => server.close());

    const doc = openApiDocument({} as never) as { paths: Record<string, { patch?: { responses: Record<string, unknown> } }> };
    expect(Object.keys(doc.paths)).toContain("/api/organizations/{orgId}/topics");
    expect(Object.keys(doc.paths)).not.toContain("/api/organizations/{orgId}/categories");
    expect(Object.keys(doc.paths["/api/organizations/{orgId}/business-description"]!.patch!.responses)).toContain("409");
    expect(Object.keys(doc.paths["/api/organizations/{orgId}/business-description"]!.patch!.responses)).not.toContain("412");
  });
});
