/**
 * The read contract at the edge: one table of requests sent to `cdsnap serve`
 * and to the edge handler, which must answer each with the same status, body
 * and the headers that matter (ETag, Cache-Control, Cache-Tag, Vary, CORS,
 * Allow, …). The handler runs twice: in the Workers runtime itself (`cdsnap
 * edge dev`: workerd through miniflare, the tree as static assets, the edge
 * document in KV) and under Node (`cdsnap edge serve`). All of them read one
 * real site: a SQLite file, a built tree, the edge document beside it; PATCHes
 * sent to an edge reach the `serve` they name as origin.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_SECRET_VALUES, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { createKey, hashKey, revokeKey } from "../../src/db/keys.js";
import { startEdgeDev, type RunningEdgeDev } from "../../src/edge/edge-dev.js";
import { startEdgeServer, type RunningEdgeServer } from "../../src/edge/node-adapter.js";
import { keyDigest } from "../../src/edge/edge-document.js";
import { edgeDocumentFileOf } from "../../src/edge/publish-document.js";
import { startServer, type RunningServer } from "../../src/server/create-server.js";
import { buildFixture, makeFixture, removeFixture, type Fixture } from "../fixtures/build-fixture.js";
import { runCli } from "../fixtures/cli.js";
import { withDb } from "../fixtures/database.js";
import { edgeBundle, send, sendRaw, type Seen } from "../fixtures/edge.js";
import { OpenApiOracle } from "../fixtures/openapi-oracle.js";
import { plantCanarySecrets } from "../fixtures/secrets.js";
import { listFiles } from "../fixtures/tree.js";
import { pollUntil } from "../fixtures/wait.js";

const DEMO = "/api/organizations/demo";
const HARBOR = "/api/organizations/harbor";
const TARGETS = ["workerd", "node"] as const;
type Target = (typeof TARGETS)[number];

let fx: Fixture;
let canaries: string[];
let revokedKey: string;
let origin: RunningServer;
let workerd: RunningEdgeDev;
let node: RunningEdgeServer;
const edges = {} as Record<Target, string>;

beforeAll(async () => {
  fx = await makeFixture({ demo: true });
  canaries = plantCanarySecrets(fx.db);
  revokedKey = withDb(fx.db, (db) => {
    const created = createKey(db, { orgId: "demo", scopes: ["read"], label: "revoked before the build" });
    revokeKey(db, created.record.id);
    return created.rawKey;
  });
  await buildFixture(fx);
  // No failed-key limit: the edge leaves that to the platform, and this table sends many bad keys.
  origin = await startServer({ db: fx.db, out: fx.out, port: 0, authFailureRate: 0, log: () => undefined });
  workerd = await startEdgeDev({ db: fx.db, out: fx.out, port: 0, origin: origin.url, edgeBundle: await edgeBundle(), pollMs: 50 });
  node = await startEdgeServer({ out: fx.out, port: 0, origin: origin.url, refreshMs: 50 });
  edges.workerd = workerd.url;
  edges.node = node.url;
}, 60_000);

afterAll(async () => {
  await workerd?.close();
  await node?.close();
  await origin?.close(1_000);
  await removeFixture(fx);
});

// ------------------------------------------------------------ comparing answers

/** The headers that make an answer what it is; Date, Connection and the like are each server's own. */
const COMPARED = [
  "etag",
  "cache-control",
  "cache-tag",
  "vary",
  "allow",
  "content-type",
  "content-length",
  "content-encoding",
  "x-content-type-options",
  "accept-ranges",
  "retry-after",
  "access-control-allow-origin",
  "access-control-expose-headers",
  "access-control-allow-methods",
  "access-control-allow-headers",
  "access-control-max-age",
];

function view(seen: Seen) {
  const headers: Record<string, string> = {};
  for (const name of COMPARED) if (name in seen.headers) headers[name] = seen.headers[name]!;
  return { status: seen.status, headers, body: seen.body.toString("utf8") };
}

const oracle = new OpenApiOracle();

/** The edge's answer judged by schemas/openapi.json, as every answer of `serve` is. */
function judged(method: string, target: string, seen: Seen): string[] {
  return oracle.check({ method, url: target, status: seen.status, headers: seen.headers, body: seen.body });
}

interface Case {
  name: string;
  method?: string;
  target: string;
  key?: string | (() => string);
  headers?: Record<string, string>;
  status: number;
}

const CASES: Case[] = [
  // every route kind
  { name: "the block list", target: `${DEMO}/blocks`, key: DEMO_READ_KEY, status: 200 },
  { name: "a block by id", target: `${DEMO}/blocks/blk-hero`, key: DEMO_READ_KEY, status: 200 },
  { name: "a block by slug", target: `${DEMO}/blocks/by-slug/home-hero`, key: DEMO_READ_KEY, status: 200 },
  { name: "the organization", target: `${DEMO}/organization`, key: DEMO_READ_KEY, status: 200 },
  { name: "the contents list", target: `${DEMO}/contents`, key: DEMO_READ_KEY, status: 200 },
  { name: "a post by id", target: `${DEMO}/contents/post-0002`, key: DEMO_READ_KEY, status: 200 },
  { name: "a post by slug", target: `${DEMO}/contents/by-slug/sourcing-ethiopian-yirgacheffe`, key: DEMO_READ_KEY, status: 200 },
  { name: "a post's references", target: `${DEMO}/contents/post-0002/references`, key: DEMO_READ_KEY, status: 200 },
  { name: "the categories", target: `${DEMO}/categories`, key: DEMO_READ_KEY, status: 200 },
  { name: "a trailing slash", target: `${DEMO}/categories/`, key: DEMO_READ_KEY, status: 200 },
  { name: "a write key reading", target: `${DEMO}/organization`, key: DEMO_WRITE_KEY, status: 200 },
  { name: "HEAD of a list", method: "HEAD", target: `${DEMO}/contents`, key: DEMO_READ_KEY, status: 200 },
  // ?pages= (D8)
  { name: "?pages=home", target: `${DEMO}/blocks?pages=home`, key: DEMO_READ_KEY, status: 200 },
  { name: "?pages= two pages", target: `${DEMO}/blocks?pages=pricing,home`, key: DEMO_READ_KEY, status: 200 },
  { name: "?pages= repeated", target: `${DEMO}/blocks?pages=pricing&pages=home`, key: DEMO_READ_KEY, status: 200 },
  { name: "?pages= of no block", target: `${DEMO}/blocks?pages=nowhere`, key: DEMO_READ_KEY, status: 200 },
  { name: "?pages= empty", target: `${DEMO}/blocks?pages=`, key: DEMO_READ_KEY, status: 200 },
  { name: "?pages= on a route without it", target: `${DEMO}/contents?pages=home`, key: DEMO_READ_KEY, status: 200 },
  // keys (D5)
  { name: "no key", target: `${DEMO}/blocks`, status: 401 },
  { name: "an unknown key", target: `${DEMO}/blocks`, key: "cds_not-a-key-of-this-site", status: 401 },
  { name: "a revoked key", target: `${DEMO}/blocks`, key: () => revokedKey, status: 401 },
  { name: "a key far too long", target: `${DEMO}/blocks`, key: "k".repeat(600), status: 401 },
  { name: "another organization's key", target: `${DEMO}/blocks`, key: HARBOR_READ_KEY, status: 403 },
  { name: "HEAD without a key", method: "HEAD", target: `${DEMO}/contents`, status: 401 },
  // 404 and 405
  { name: "a post that does not exist", target: `${DEMO}/contents/post-9999`, key: DEMO_READ_KEY, status: 404 },
  { name: "a slug that does not exist", target: `${DEMO}/contents/by-slug/no-such-post`, key: DEMO_READ_KEY, status: 404 },
  { name: "a path of no route", target: `${DEMO}/nothing-here`, key: DEMO_READ_KEY, status: 404 },
  { name: "the root", target: "/", key: DEMO_READ_KEY, status: 404 },
  { name: "a path of no route, without a key", target: "/api", status: 401 },
  { name: "an organization of no tree", target: "/api/organizations/nobody/blocks", key: DEMO_READ_KEY, status: 403 },
  { name: "GET of a write route", target: `${DEMO}/business-description`, key: DEMO_READ_KEY, status: 405 },
  { name: "POST of a read route", method: "POST", target: `${DEMO}/blocks`, key: DEMO_READ_KEY, status: 405 },
  { name: "DELETE of a read route", method: "DELETE", target: `${DEMO}/contents/post-0002`, key: DEMO_READ_KEY, status: 405 },
  // CORS (D11): demo allows any origin, harbor lists one
  { name: "any origin", target: `${DEMO}/blocks`, key: DEMO_READ_KEY, headers: { origin: "https://anywhere.example" }, status: 200 },
  { name: "a listed origin", target: `${HARBOR}/organization`, key: HARBOR_READ_KEY, headers: { origin: "https://harbor.example" }, status: 200 },
  { name: "an origin not listed", target: `${HARBOR}/organization`, key: HARBOR_READ_KEY, headers: { origin: "https://evil.example" }, status: 200 },
  { name: "an error to a listed origin", target: `${HARBOR}/organization`, headers: { origin: "https://harbor.example" }, status: 401 },
  { name: "a preflight", method: "OPTIONS", target: `${DEMO}/blocks`, headers: { origin: "https://anywhere.example", "access-control-request-method": "GET" }, status: 204 },
  { name: "a preflight of a write route", method: "OPTIONS", target: `${DEMO}/business-offers`, headers: { origin: "https://anywhere.example", "access-control-request-method": "PATCH" }, status: 204 },
  { name: "a preflight from a listed origin", method: "OPTIONS", target: `${HARBOR}/blocks`, headers: { origin: "https://harbor.example" }, status: 204 },
  { name: "a preflight from an origin not listed", method: "OPTIONS", target: `${HARBOR}/blocks`, headers: { origin: "https://evil.example" }, status: 204 },
  { name: "a preflight of no route", method: "OPTIONS", target: `${DEMO}/nothing-here`, headers: { origin: "https://anywhere.example" }, status: 404 },
];

function requestOf(c: Case): { method: string; headers: Record<string, string> } {
  const key = typeof c.key === "function" ? c.key() : c.key;
  return { method: c.method ?? "GET", headers: { ...(key === undefined ? {} : { "x-api-key": key }), ...c.headers } };
}

describe.each(TARGETS)("the edge on %s answers the read contract as serve does", (target) => {
  it.each(CASES)("$name", async (c) => {
    const request = requestOf(c);
    const expected = await send(origin.url, c.target, request);
    const seen = await send(edges[target], c.target, request);
    expect(expected.status).toBe(c.status);
    expect(view(seen)).toEqual(view(expected));
    expect(judged(request.method, c.target, seen)).toEqual([]);
  });

  it("answers If-None-Match with 304 for the ETag serve gives, in every spelling RFC 9110 allows", async () => {
    for (const file of [`${DEMO}/contents`, `${DEMO}/blocks?pages=home`, `${HARBOR}/organization`]) {
      const key = file.startsWith(HARBOR) ? HARBOR_READ_KEY : DEMO_READ_KEY;
      const { headers } = await send(origin.url, file, { headers: { "x-api-key": key } });
      const etag = headers.etag!;
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const request = { headers: { "x-api-key": key, "if-none-match": ifNoneMatch } };
        const expected = await send(origin.url, file, request);
        const seen = await send(edges[target], file, request);
        expect(expected.status).toBe(304);
        expect(view(seen)).toEqual(view(expected));
      }
      const stale = { headers: { "x-api-key": key, "if-none-match": '"0000"' } };
      expect((await send(edges[target], file, stale)).status).toBe(200);
    }
  });

  it("passes a PATCH to the origin, and the next GET at the edge shows it", async () => {
    const text = `Written through the ${target} edge`;
    const patch = {
      method: "PATCH",
      headers: { "x-api-key": DEMO_WRITE_KEY, "content-type": "application/json" },
      body: JSON.stringify({ businessDescription: text }),
    };
    const written = await send(edges[target], `${DEMO}/business-description`, patch);
    expect(written.status).toBe(200);
    expect(JSON.parse(written.body.toString("utf8"))).toEqual({ businessDescription: text });

    const read = { headers: { "x-api-key": DEMO_READ_KEY } };
    const seen = await send(edges[target], `${DEMO}/organization`, read);
    expect(JSON.parse(seen.body.toString("utf8")).businessDescription).toBe(text);
    expect(view(seen)).toEqual(view(await send(origin.url, `${DEMO}/organization`, read)));

    // The origin's own refusals come back as they are.
    const readOnly = { ...patch, headers: { ...patch.headers, "x-api-key": DEMO_READ_KEY } };
    const refused = await send(edges[target], `${DEMO}/business-description`, readOnly);
    expect(view(refused)).toEqual(view(await send(origin.url, `${DEMO}/business-description`, readOnly)));
    expect(refused.status).toBe(403);
    const malformed = { ...patch, body: "{not json" };
    expect((await send(edges[target], `${DEMO}/business-offers`, malformed)).status).toBe(400);
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
    for (const t of TARGETS) expect(await pollUntil(async () => (await read(edges[t])).status === 200, 10_000)).toBe(true);

    const revoked = await runCli(["keys", "revoke", id, "--db", fx.db, "--out", fx.out]);
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toContain(edgeDocumentFileOf(fx.out));
    for (const t of TARGETS) expect(await pollUntil(async () => (await read(edges[t])).status === 401, 10_000)).toBe(true);
    expect((await read(origin.url)).status).toBe(401);
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
    for (const t of TARGETS) {
      // edge dev reloads workerd to list the new tree's assets: a request may meet the restart.
      const shows = async () => (await send(edges[t], `${DEMO}/contents/post-0012`, request).catch(() => null))?.body.equals(expected.body) ?? false;
      expect(await pollUntil(shows, 10_000)).toBe(true);
      expect(view(await send(edges[t], `${DEMO}/contents/post-0012`, request))).toEqual(view(expected));
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
    for (const t of TARGETS) {
      for (const target of ["/edge.json", "/.site.cdsnap/edge.json", "/../edge.json"]) {
        expect([401, 404]).toContain((await send(edges[t], target, { headers: { "x-api-key": DEMO_READ_KEY } })).status);
      }
    }
  });
});
