/**
 * The read contract at the edge: one table of requests, each with the answer
 * the contract calls for written out (status, every header that matters:
 * Content-Type, Cache-Control, Vary, ETag, Cache-Tag, Allow, CORS; and the
 * body, from the demo's seed and posts), sent to `cdsnap serve` and to the
 * edge handler twice: in the Workers runtime itself (`cdsnap edge dev`: workerd
 * through miniflare, the tree as static assets, the edge document in KV) and
 * under Node (`cdsnap edge serve`). Stating the answers, not comparing the
 * servers, is what catches a bug in the code they share (api-reads.ts,
 * content-coding.ts, route-table.ts); each edge answer is then also compared
 * with serve's, byte for byte. All of them read one real site: a SQLite file,
 * a built tree, the edge document beside it; PATCHes sent to an edge reach the
 * `serve` they name as origin.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_SECRET_VALUES, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { createKey, hashKey, revokeKey } from "../../src/db/keys.js";
import type { RunningEdgeDev } from "../../src/edge/edge-dev.js";
import type { RunningEdgeServer } from "../../src/edge/node-adapter.js";
import { keyDigest } from "../../src/edge/edge-document.js";
import { edgeDocumentFileOf } from "../../src/edge/publish-document.js";
import type { RunningServer } from "../../src/server/create-server.js";
import { buildFixture, type Fixture } from "../fixtures/build-fixture.js";
import { runCli } from "../fixtures/cli.js";
import { withDb } from "../fixtures/database.js";
import {
  DEMO_BLOCK_IDS,
  DEMO_CATEGORIES,
  DEMO_CONTENT_IDS,
  DEMO_HERO,
  DEMO_ORGANIZATION,
  DEMO_PAGES,
  DEMO_POST_0002,
  DEMO_POST_0002_REFERENCES,
  HARBOR_ORGANIZATION,
} from "../fixtures/demo-answers.js";
import { send, sendRaw, type Seen } from "../fixtures/edge.js";
import { startEdgeSite, type EdgeSite } from "../fixtures/edge-site.js";
import { OpenApiOracle } from "../fixtures/openapi-oracle.js";
import { plantCanarySecrets } from "../fixtures/secrets.js";
import { listFiles } from "../fixtures/tree.js";
import { pollUntil } from "../fixtures/wait.js";

const DEMO = "/api/organizations/demo";
const HARBOR = "/api/organizations/harbor";
const TARGETS = ["serve", "workerd", "node"] as const;
const EDGES = ["workerd", "node"] as const;
type Target = (typeof TARGETS)[number];

let fx: Fixture;
let canaries: string[];
let revokedKey: string;
let origin: RunningServer;
let workerd: RunningEdgeDev;
let node: RunningEdgeServer;
const bases = {} as Record<Target, string>;

let site: EdgeSite;

beforeAll(async () => {
  site = await startEdgeSite({
    prepare: (built) => {
      canaries = plantCanarySecrets(built.db);
      revokedKey = withDb(built.db, (db) => {
        const created = createKey(db, { orgId: "demo", scopes: ["read"], label: "revoked before the build" });
        revokeKey(db, created.record.id);
        return created.rawKey;
      });
    },
    // No failed-key limit: the edge leaves that to the platform, and this table sends many bad keys.
    serve: { authFailureRate: 0 },
  });
  ({ fx, origin, workerd, node } = site);
  bases.serve = origin.url;
  bases.workerd = workerd.url;
  bases.node = node.url;
}, 60_000);

afterAll(() => site?.close());

// ------------------------------------------------------------ what the contract says

/**
 * One header's rule: its exact value, a pattern, or null for "absent". Every
 * case states all of {@link CHECKED}: a header it does not name must be absent.
 */
type Rule = string | RegExp | null;
type Rules = Record<string, Rule>;

const CHECKED = [
  "content-type",
  "cache-control",
  "vary",
  "etag",
  "cache-tag",
  "allow",
  "accept-ranges",
  "content-encoding",
  "retry-after",
  "x-content-type-options",
  "access-control-allow-origin",
  "access-control-expose-headers",
  "access-control-allow-methods",
  "access-control-allow-headers",
  "access-control-max-age",
];

// Spelled out here from the spec and docs/api.md ("Response headers"), never imported from the code under test.
const JSON_TYPE = "application/json; charset=utf-8";
const STRONG_ETAG = /^"[0-9a-f]{64}"$/;
const ANY_ORIGIN: Rules = { "access-control-allow-origin": "*", "access-control-expose-headers": "ETag, Retry-After, Cache-Tag" };
const ORIGIN = (origin: string): Rules => ({ ...ANY_ORIGIN, "access-control-allow-origin": origin });
const NO_CORS: Rules = {};

/** A file's answer (D10): cacheable, a strong ETag, its Cache-Tag, and Vary with Accept-Encoding. */
const file = (cacheTag: string, cors = ANY_ORIGIN): Rules => ({
  "content-type": JSON_TYPE,
  "cache-control": "public, max-age=60, stale-while-revalidate=600",
  vary: "x-api-key, Origin, Accept-Encoding",
  etag: STRONG_ETAG,
  "cache-tag": cacheTag,
  "accept-ranges": "none",
  "x-content-type-options": "nosniff",
  ...cors,
});

/** An error (D6): never cached, Vary without Accept-Encoding, CORS as for any answer. */
const failure = (extra: Rules = {}, cors = ANY_ORIGIN): Rules => ({
  "content-type": JSON_TYPE,
  "cache-control": "no-store",
  vary: "x-api-key, Origin",
  "x-content-type-options": "nosniff",
  ...cors,
  ...extra,
});

const READ_ALLOW = "GET, HEAD, OPTIONS";
const WRITE_ALLOW = "PATCH, OPTIONS";

/**
 * A preflight's 204 (D11): the methods and headers allowed only to an allowed
 * origin; Vary, Allow, and what a cache keeps it by (two hours, the
 * organization's tag) always.
 */
const preflight = (allow: string, orgId: string, cors = ANY_ORIGIN): Rules => ({
  vary: "x-api-key, Origin",
  allow,
  "cache-control": "public, max-age=7200",
  "cache-tag": `org:${orgId}`,
  ...cors,
  ...("access-control-allow-origin" in cors
    ? {
        "access-control-allow-methods": "GET, HEAD, PATCH, OPTIONS",
        "access-control-allow-headers": "x-api-key, content-type, if-match, if-none-match",
        "access-control-max-age": "7200",
      }
    : {}),
});

const errorBody = (code: string) => ({ error: { code, message: expect.stringMatching(/\S/) } });
const blockIds = (ids: string[]) => (json: { items: { id: string; status: string }[] }) => {
  expect(json.items.map((b) => b.id)).toEqual(ids);
  // D8: page membership stays internal; every item is a published Block, nothing more.
  for (const block of json.items) {
    expect(Object.keys(block).sort()).toEqual(["fields", "id", "name", "slug", "status"]);
    expect(block.status).toBe("published");
  }
};

interface Case {
  name: string;
  method?: string;
  target: string;
  key?: string | (() => string);
  headers?: Record<string, string>;
  status: number;
  answer: Rules;
  /** The parsed body, as a value (asymmetric matchers allowed) or a check; none for HEAD, 204. */
  body?: unknown;
}

const POST_0002_TAGS = "org:demo,content:demo/post-0002,category:demo/origins";
const POST_0002 = (json: Record<string, unknown>) => {
  expect(json).toEqual({ ...DEMO_POST_0002, content: expect.any(String), references: DEMO_POST_0002_REFERENCES });
  expect(json.content).toMatch(/^Every spring, one of us travels to the Gedeo zone in southern Ethiopia\./);
};
const HARBOR_ORIGIN = "https://harbor.example";

const CASES: Case[] = [
  // every route kind
  { name: "the block list", target: `${DEMO}/blocks`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,blocks:demo"), body: blockIds(DEMO_BLOCK_IDS) },
  { name: "a block by id", target: `${DEMO}/blocks/blk-hero`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,block:demo/blk-hero"), body: DEMO_HERO },
  { name: "a block by slug", target: `${DEMO}/blocks/by-slug/home-hero`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,block:demo/blk-hero"), body: DEMO_HERO },
  { name: "the organization", target: `${DEMO}/organization`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,organization:demo"), body: DEMO_ORGANIZATION },
  {
    name: "the contents list",
    target: `${DEMO}/contents`,
    key: DEMO_READ_KEY,
    status: 200,
    answer: file("org:demo,contents:demo"),
    body: (json: { items: Record<string, unknown>[] }) => {
      expect(json.items.map((item) => item.id)).toEqual(DEMO_CONTENT_IDS);
      expect(json.items.find((item) => item.id === "post-0002")).toEqual(DEMO_POST_0002);
    },
  },
  { name: "a post by id", target: `${DEMO}/contents/post-0002`, key: DEMO_READ_KEY, status: 200, answer: file(POST_0002_TAGS), body: POST_0002 },
  { name: "a post by slug", target: `${DEMO}/contents/by-slug/sourcing-ethiopian-yirgacheffe`, key: DEMO_READ_KEY, status: 200, answer: file(POST_0002_TAGS), body: POST_0002 },
  { name: "a post's references", target: `${DEMO}/contents/post-0002/references`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,content:demo/post-0002"), body: DEMO_POST_0002_REFERENCES },
  { name: "the categories", target: `${DEMO}/categories`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,categories:demo"), body: { items: DEMO_CATEGORIES } },
  { name: "a trailing slash", target: `${DEMO}/categories/`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,categories:demo"), body: { items: DEMO_CATEGORIES } },
  { name: "a write key reading", target: `${DEMO}/organization`, key: DEMO_WRITE_KEY, status: 200, answer: file("org:demo,organization:demo"), body: DEMO_ORGANIZATION },
  { name: "HEAD of a list", method: "HEAD", target: `${DEMO}/contents`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,contents:demo") },
  // ?pages= (D8): the list's own Cache-Tag, an ETag of the filtered body
  { name: "?pages=home", target: `${DEMO}/blocks?pages=home`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,blocks:demo"), body: blockIds(DEMO_PAGES.home) },
  { name: "?pages= two pages", target: `${DEMO}/blocks?pages=pricing,home`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,blocks:demo"), body: blockIds(DEMO_PAGES.homeAndPricing) },
  { name: "?pages= repeated", target: `${DEMO}/blocks?pages=pricing&pages=home`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,blocks:demo"), body: blockIds(DEMO_PAGES.homeAndPricing) },
  { name: "?pages= of no block", target: `${DEMO}/blocks?pages=nowhere`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,blocks:demo"), body: { items: [] } },
  { name: "?pages= empty", target: `${DEMO}/blocks?pages=`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,blocks:demo"), body: blockIds(DEMO_BLOCK_IDS) },
  { name: "?pages= on a route without it", target: `${DEMO}/contents?pages=home`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,contents:demo"), body: (json: { items: { id: string }[] }) => expect(json.items.map((i) => i.id)).toEqual(DEMO_CONTENT_IDS) },
  // ?pages= with the names of Object.prototype's members: page names like any other, of no block
  ...["constructor", "__proto__", "toString", "hasOwnProperty"].flatMap((name): Case[] => [
    { name: `?pages=${name}`, target: `${DEMO}/blocks?pages=${name}`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,blocks:demo"), body: { items: [] } },
    { name: `?pages=${name},pricing`, target: `${DEMO}/blocks?pages=${name},pricing`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,blocks:demo"), body: blockIds(DEMO_PAGES.pricing) },
    { name: `?pages=home&pages=${name}`, target: `${DEMO}/blocks?pages=home&pages=${name}`, key: DEMO_READ_KEY, status: 200, answer: file("org:demo,blocks:demo"), body: blockIds(DEMO_PAGES.home) },
  ]),
  // keys (D5)
  { name: "no key", target: `${DEMO}/blocks`, status: 401, answer: failure(), body: errorBody("unauthorized") },
  { name: "an unknown key", target: `${DEMO}/blocks`, key: "cds_not-a-key-of-this-site", status: 401, answer: failure(), body: errorBody("unauthorized") },
  { name: "a revoked key", target: `${DEMO}/blocks`, key: () => revokedKey, status: 401, answer: failure(), body: errorBody("unauthorized") },
  { name: "a key far too long", target: `${DEMO}/blocks`, key: "k".repeat(600), status: 401, answer: failure(), body: errorBody("unauthorized") },
  { name: "another organization's key", target: `${DEMO}/blocks`, key: HARBOR_READ_KEY, status: 403, answer: failure(), body: errorBody("forbidden") },
  { name: "HEAD without a key", method: "HEAD", target: `${DEMO}/contents`, status: 401, answer: failure() },
  // 404 and 405 (D6)
  { name: "a post that does not exist", target: `${DEMO}/contents/post-9999`, key: DEMO_READ_KEY, status: 404, answer: failure(), body: errorBody("not_found") },
  { name: "a scheduled post", target: `${DEMO}/contents/post-0014`, key: DEMO_READ_KEY, status: 404, answer: failure(), body: errorBody("not_found") },
  { name: "a draft block", target: `${DEMO}/blocks/blk-holiday-promo`, key: DEMO_READ_KEY, status: 404, answer: failure(), body: errorBody("not_found") },
  { name: "a slug that does not exist", target: `${DEMO}/contents/by-slug/no-such-post`, key: DEMO_READ_KEY, status: 404, answer: failure(), body: errorBody("not_found") },
  { name: "a path of no route", target: `${DEMO}/nothing-here`, key: DEMO_READ_KEY, status: 404, answer: failure(), body: errorBody("not_found") },
  { name: "the root", target: "/", key: DEMO_READ_KEY, status: 404, answer: failure(), body: errorBody("not_found") },
  { name: "a path of no route, without a key", target: "/api", status: 401, answer: failure(), body: errorBody("unauthorized") },
  { name: "an organization of no tree", target: "/api/organizations/nobody/blocks", key: DEMO_READ_KEY, status: 403, answer: failure(), body: errorBody("forbidden") },
  { name: "GET of a write route", target: `${DEMO}/business-description`, key: DEMO_READ_KEY, status: 405, answer: failure({ allow: WRITE_ALLOW }), body: errorBody("method_not_allowed") },
  { name: "POST of a read route", method: "POST", target: `${DEMO}/blocks`, key: DEMO_READ_KEY, status: 405, answer: failure({ allow: READ_ALLOW }), body: errorBody("method_not_allowed") },
  { name: "DELETE of a read route", method: "DELETE", target: `${DEMO}/contents/post-0002`, key: DEMO_READ_KEY, status: 405, answer: failure({ allow: READ_ALLOW }), body: errorBody("method_not_allowed") },
  // CORS (D11): demo allows any origin, harbor lists one
  { name: "any origin", target: `${DEMO}/blocks`, key: DEMO_READ_KEY, headers: { origin: "https://anywhere.example" }, status: 200, answer: file("org:demo,blocks:demo"), body: blockIds(DEMO_BLOCK_IDS) },
  { name: "a listed origin", target: `${HARBOR}/organization`, key: HARBOR_READ_KEY, headers: { origin: HARBOR_ORIGIN }, status: 200, answer: file("org:harbor,organization:harbor", ORIGIN(HARBOR_ORIGIN)), body: HARBOR_ORGANIZATION },
  { name: "an origin not listed", target: `${HARBOR}/organization`, key: HARBOR_READ_KEY, headers: { origin: "https://evil.example" }, status: 200, answer: file("org:harbor,organization:harbor", NO_CORS), body: HARBOR_ORGANIZATION },
  { name: "no origin at a listing organization", target: `${HARBOR}/organization`, key: HARBOR_READ_KEY, status: 200, answer: file("org:harbor,organization:harbor", NO_CORS), body: HARBOR_ORGANIZATION },
  { name: "an error to a listed origin", target: `${HARBOR}/organization`, headers: { origin: HARBOR_ORIGIN }, status: 401, answer: failure({}, ORIGIN(HARBOR_ORIGIN)), body: errorBody("unauthorized") },
  { name: "a preflight", method: "OPTIONS", target: `${DEMO}/blocks`, headers: { origin: "https://anywhere.example", "access-control-request-method": "GET" }, status: 204, answer: preflight(READ_ALLOW, "demo") },
  { name: "a preflight of a write route", method: "OPTIONS", target: `${DEMO}/business-offers`, headers: { origin: "https://anywhere.example", "access-control-request-method": "PATCH" }, status: 204, answer: preflight(WRITE_ALLOW, "demo") },
  { name: "a preflight from a listed origin", method: "OPTIONS", target: `${HARBOR}/blocks`, headers: { origin: HARBOR_ORIGIN }, status: 204, answer: preflight(READ_ALLOW, "harbor", ORIGIN(HARBOR_ORIGIN)) },
  { name: "a preflight from an origin not listed", method: "OPTIONS", target: `${HARBOR}/blocks`, headers: { origin: "https://evil.example" }, status: 204, answer: preflight(READ_ALLOW, "harbor", NO_CORS) },
  { name: "a preflight of no route", method: "OPTIONS", target: `${DEMO}/nothing-here`, headers: { origin: "https://anywhere.example" }, status: 404, answer: failure(), body: errorBody("not_found") },
];

function requestOf(c: Case): { method: string; headers: Record<string, string> } {
  const key = typeof c.key === "function" ? c.key() : c.key;
  return { method: c.method ?? "GET", headers: { ...(key === undefined ? {} : { "x-api-key": key }), ...c.headers } };
}

/** The status and every checked header of an answer; absent headers left out. */
function headersOf(seen: Seen) {
  const headers: Record<string, string> = {};
  for (const name of CHECKED) if (name in seen.headers) headers[name] = seen.headers[name]!;
  return { status: seen.status, headers };
}

/** What {@link headersOf} must give for `status` and `rules`: a pattern as a matcher, null left out. */
function expectedOf(status: number, rules: Rules) {
  const headers: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(rules)) {
    if (!CHECKED.includes(name)) throw new Error(`${name} is not a checked header`);
    if (rule !== null) headers[name] = rule instanceof RegExp ? expect.stringMatching(rule) : rule;
  }
  return { status, headers };
}

/** Asserts an answer against its case: status, every checked header, the body; a 200's ETag is its body's SHA-256. */
function expectAnswer(seen: Seen, c: Case): void {
  const method = c.method ?? "GET";
  expect(headersOf(seen)).toEqual(expectedOf(c.status, c.answer));
  if (method === "HEAD" || c.status === 204) {
    expect(seen.body.length).toBe(0);
    return;
  }
  expect(Number(seen.headers["content-length"])).toBe(seen.body.length);
  const json: unknown = JSON.parse(seen.body.toString("utf8"));
  if (typeof c.body === "function") (c.body as (json: unknown) => void)(json);
  else expect(json).toEqual(c.body);
  if (c.status === 200) expect(seen.headers.etag).toBe(`"${sha256(seen.body)}"`);
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

// ------------------------------------------------------------ the three servers

/** The parts of an answer two servers of one contract must agree on, Date and Connection aside. */
function view(seen: Seen) {
  return { ...headersOf(seen), contentLength: seen.headers["content-length"], body: seen.body.toString("utf8") };
}

const oracle = new OpenApiOracle();

/** An edge's answer judged by schemas/openapi.json, as every answer of `serve` is by the test setup. */
function judged(method: string, target: string, seen: Seen): string[] {
  return oracle.check({ method, url: target, status: seen.status, headers: seen.headers, body: seen.body });
}

describe.each(TARGETS)("%s answers the read contract", (target) => {
  it.each(CASES)("$name", async (c) => {
    const request = requestOf(c);
    const seen = await send(bases[target], c.target, request);
    expectAnswer(seen, c);
    if (target === "serve") return;
    // Beyond what the case states, the edge and serve agree byte for byte.
    expect(view(seen)).toEqual(view(await send(bases.serve, c.target, request)));
    expect(judged(request.method, c.target, seen)).toEqual([]);
  });

  it("answers If-None-Match with 304 for the ETag of the body, in every spelling RFC 9110 allows", async () => {
    const files = [
      [`${DEMO}/contents`, DEMO_READ_KEY, "org:demo,contents:demo", ANY_ORIGIN],
      [`${DEMO}/blocks?pages=home`, DEMO_READ_KEY, "org:demo,blocks:demo", ANY_ORIGIN],
      [`${HARBOR}/organization`, HARBOR_READ_KEY, "org:harbor,organization:harbor", NO_CORS],
    ] as const;
    for (const [path, key, cacheTag, cors] of files) {
      const full = await send(bases[target], path, { headers: { "x-api-key": key } });
      const etag = `"${sha256(full.body)}"`;
      expect(full.headers.etag).toBe(etag);
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const seen = await send(bases[target], path, { headers: { "x-api-key": key, "if-none-match": ifNoneMatch } });
        const { "content-type": _type, "accept-ranges": _ranges, ...validators } = file(cacheTag, cors);
        expect(headersOf(seen), ifNoneMatch).toEqual(expectedOf(304, { ...validators, etag }));
        expect(seen.body.length).toBe(0);
      }
      const stale = await send(bases[target], path, { headers: { "x-api-key": key, "if-none-match": '"0000"' } });
      expect(stale.status).toBe(200);
      expect(stale.body.equals(full.body)).toBe(true);
    }
  });
});

describe.each(EDGES)("the edge on %s passes a PATCH to its origin", (target) => {
  it("stores it there, and the next GET at the edge shows it", async () => {
    const text = `Written through the ${target} edge`;
    const patch = {
      method: "PATCH",
      headers: { "x-api-key": DEMO_WRITE_KEY, "content-type": "application/json" },
      body: JSON.stringify({ businessDescription: text }),
    };
    const written = await send(bases[target], `${DEMO}/business-description`, patch);
    expect(written.status).toBe(200);
    expect(JSON.parse(written.body.toString("utf8"))).toEqual({ businessDescription: text });

    const read = { headers: { "x-api-key": DEMO_READ_KEY } };
    const seen = await send(bases[target], `${DEMO}/organization`, read);
    expect(JSON.parse(seen.body.toString("utf8"))).toEqual({ ...DEMO_ORGANIZATION, businessDescription: text });
    expect(view(seen)).toEqual(view(await send(bases.serve, `${DEMO}/organization`, read)));
  });

  it("passes the origin's refusals back as they are", async () => {
    const patch = {
      method: "PATCH",
      headers: { "x-api-key": DEMO_READ_KEY, "content-type": "application/json" },
      body: JSON.stringify({ businessDescription: "never stored" }),
    };
    const refused = await send(bases[target], `${DEMO}/business-description`, patch);
    expect(headersOf(refused)).toEqual(expectedOf(403, failure()));
    expect(JSON.parse(refused.body.toString("utf8"))).toEqual(errorBody("insufficient_scope"));
    expect(view(refused)).toEqual(view(await send(bases.serve, `${DEMO}/business-description`, patch)));
    const malformed = { ...patch, headers: { ...patch.headers, "x-api-key": DEMO_WRITE_KEY }, body: "{not json" };
    const answer = await send(bases[target], `${DEMO}/business-offers`, malformed);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body.toString("utf8"))).toEqual(errorBody("malformed_json"));
  });
});

describe("the edge on Node compresses what it answers", () => {
  it("sends gzip to a client that takes it, under its own strong ETag, and a 304 for any of the file's ETags", async () => {
    const plain = await send(origin.url, `${DEMO}/contents`, { headers: { "x-api-key": DEMO_READ_KEY } });
    const request = { headers: { "x-api-key": DEMO_READ_KEY, "accept-encoding": "br;q=1, gzip;q=0.5" } };
    const packed = await sendRaw(node.url, `${DEMO}/contents`, request);
    expect(packed.status).toBe(200);
    expect(packed.headers["content-encoding"]).toBe("gzip");
    expect(packed.headers.vary).toBe("x-api-key, Origin, Accept-Encoding");
    expect(packed.headers.etag).toBe(`${plain.headers.etag!.slice(0, -1)}-gzip"`);
    expect(Number(packed.headers["content-length"])).toBe(packed.body.length);
    expect(packed.body.length).toBeLessThan(plain.body.length / 2);
    expect(gunzipSync(packed.body).equals(plain.body)).toBe(true);
    for (const etag of [plain.headers.etag!, packed.headers.etag!]) {
      const again = await send(node.url, `${DEMO}/contents`, { headers: { ...request.headers, "if-none-match": etag } });
      expect(again.status).toBe(304);
      expect(again.headers.etag).toBe(packed.headers.etag);
    }
    const refused = await send(node.url, `${DEMO}/contents`, { headers: { "x-api-key": DEMO_READ_KEY, "accept-encoding": "gzip;q=0, br" } });
    expect(refused.headers["content-encoding"]).toBeUndefined();
    expect(refused.body.equals(plain.body)).toBe(true);
  });

  it("leaves a small answer plain", async () => {
    const seen = await send(node.url, `${DEMO}/blocks/blk-hero`, { headers: { "x-api-key": DEMO_READ_KEY, "accept-encoding": "gzip" } });
    expect(seen.body.length).toBeLessThan(1024);
    expect(seen.headers["content-encoding"]).toBeUndefined();
  });
});

describe("keys and builds reach the edge", () => {
  it("a key created and revoked with `cdsnap keys … --out` is let in, then refused, at every edge", async () => {
    const created = await runCli(["keys", "create", "--db", fx.db, "--org", "demo", "--json", "--out", fx.out]);
    expect(created.code).toBe(0);
    const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
    const read = (base: string) => send(base, `${DEMO}/organization`, { headers: { "x-api-key": key } });
    for (const t of EDGES) expect(await pollUntil(async () => (await read(bases[t])).status === 200, 10_000)).toBe(true);

    const revoked = await runCli(["keys", "revoke", id, "--db", fx.db, "--out", fx.out]);
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toContain(edgeDocumentFileOf(fx.out));
    for (const base of [...EDGES.map((t) => bases[t]), origin.url]) expect(await pollUntil(async () => (await read(base)).status === 401, 10_000)).toBe(true);
  });

  it("a key revoked without --out reaches edge dev, which watches the database", async () => {
    const created = withDb(fx.db, (db) => createKey(db, { orgId: "demo", scopes: ["read"] }));
    const read = () => send(workerd.url, `${DEMO}/blocks`, { headers: { "x-api-key": created.rawKey } });
    expect(await pollUntil(async () => (await read()).status === 200, 10_000)).toBe(true);
    withDb(fx.db, (db) => revokeKey(db, created.record.id));
    expect(await pollUntil(async () => (await read()).status === 401, 10_000)).toBe(true);
  });

  it("a build's new post is answered by every edge as by serve, and keys still change after it", async () => {
    const post = path.join(fx.content, "demo/2026/notes-from-the-cupping-table.md");
    await writeFile(post, (await readFile(post, "utf8")).replace("title: Notes from the cupping table", "title: Cupping notes, rebuilt"));
    await buildFixture(fx);
    const request = { headers: { "x-api-key": DEMO_READ_KEY } };
    const expected = await send(origin.url, `${DEMO}/contents/post-0012`, request);
    expect(JSON.parse(expected.body.toString("utf8")).title).toBe("Cupping notes, rebuilt");
    for (const t of EDGES) {
      // edge dev reloads workerd to list the new tree's assets: a request may meet the restart.
      const shows = async () => (await send(bases[t], `${DEMO}/contents/post-0012`, request).catch(() => null))?.body.equals(expected.body) ?? false;
      expect(await pollUntil(shows, 10_000)).toBe(true);
      expect(view(await send(bases[t], `${DEMO}/contents/post-0012`, request))).toEqual(view(expected));
    }

    // edge dev reloaded workerd for the new tree: a revocation after it still arrives.
    const created = withDb(fx.db, (db) => createKey(db, { orgId: "demo", scopes: ["read"] }));
    const read = () => send(workerd.url, `${DEMO}/blocks`, { headers: { "x-api-key": created.rawKey } }).catch(() => null);
    expect(await pollUntil(async () => (await read())?.status === 200, 10_000)).toBe(true);
    withDb(fx.db, (db) => revokeKey(db, created.record.id));
    expect(await pollUntil(async () => (await read())?.status === 401, 10_000)).toBe(true);
  });
});

describe("the edge document", () => {
  it("lives beside the tree, never in it, and holds no raw key, no secret and not the database's key hashes", async () => {
    const docFile = edgeDocumentFileOf(fx.out);
    expect(path.relative(fx.out, docFile).startsWith("..")).toBe(true);
    expect((await listFiles(fx.out)).filter((file) => file.includes("edge"))).toEqual([]);

    const text = await readFile(docFile, "utf8");
    const keys = [DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY, revokedKey];
    const secrets = [...canaries, ...DEMO_SECRET_VALUES, ...keys, ...keys.map(hashKey)];
    expect(canaries.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(text).not.toContain(secret);

    const doc = JSON.parse(text) as { salt: string; keys: { digest: string; revoked: boolean }[]; organizations: Record<string, unknown> };
    const digestOf = async (key: string) => keyDigest(doc.salt, hashKey(key));
    const [active, revoked] = [await digestOf(DEMO_READ_KEY), await digestOf(revokedKey)];
    expect(doc.keys.find((k) => k.digest === active)).toMatchObject({ keyId: "demo-read", revoked: false });
    expect(doc.keys.find((k) => k.digest === revoked)).toMatchObject({ revoked: true });
    expect(Object.keys(doc.organizations).sort()).toEqual(["demo", "harbor"]);
    for (const key of doc.keys) expect(Object.keys(key).sort()).toEqual(["digest", "keyId", "orgId", "revoked", "scopes"]);
  });

  it("is not served at any edge", async () => {
    for (const t of EDGES) {
      for (const target of ["/edge.json", "/.site.cdsnap/edge.json", "/../edge.json"]) {
        expect([401, 404]).toContain((await send(bases[t], target, { headers: { "x-api-key": DEMO_READ_KEY } })).status);
      }
    }
  });
});
