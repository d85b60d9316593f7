/**
 * GETs as a CDN and a browser see them: D8's pages filter, D10's HTTP details
 * (types, HEAD, ETag, 304, caching, Vary, trailing slash, ignored queries) and
 * D11's CORS.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { type Served, startSite } from "../fixtures/served-site.js";
import { api, call, expectError, JSON_TYPE, patchJson, rawExchange } from "../fixtures/http.js";
import { DEMO_BLOCK_IDS } from "../fixtures/demo-answers.js";

type Site = Served & { stop(): Promise<void> };
let site: Site;

beforeAll(async () => {
  site = await startSite({ writeRate: 100_000 });
});
afterAll(() => site?.stop());

interface Block {
  id: string;
  slug: string;
  name: string;
  status: string;
  fields: unknown[];
}

async function blocks(query: string): Promise<{ text: string; ids: string[]; items: Block[] }> {
  const res = await call(site.url, api("demo", `blocks${query}`), { key: DEMO_READ_KEY });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe(JSON_TYPE);
  const text = await res.text();
  const body = JSON.parse(text) as { items: Block[] };
  expect(Object.keys(body)).toEqual(["items"]);
  return { text, ids: body.items.map((b) => b.id), items: body.items };
}

describe("D8 ?pages=", () => {
  // D2: position, then id in byte order. Draft blk-holiday-promo and archived blk-summer-sale never appear.
  const ALL = DEMO_BLOCK_IDS;

  it("without the filter every published block is listed in D2 order", async () => {
    expect((await blocks("")).ids).toEqual(ALL);
  });

  it("pages=home lists the published blocks on home, never its draft block", async () => {
    const home = await blocks("?pages=home");
    expect(home.ids).toEqual(["blk-hero", "blk-announcement"]);
    expect(home.text).not.toContain("holiday-promo");
    expect(home.text).not.toContain("DRAFT-BLOCK-CANARY");
    expect(home.text).not.toContain("ARCHIVED-BLOCK-CANARY");
  });

  it("pages=home,blog lists blocks on either page once each, in D2 order", async () => {
    expect((await blocks("?pages=home,blog")).ids).toEqual(["blk-blog-sidebar", "blk-hero", "blk-announcement"]);
    expect((await blocks("?pages=blog,home")).ids).toEqual(["blk-blog-sidebar", "blk-hero", "blk-announcement"]);
  });

  it("pages=home&pages=blog answers the same bytes as pages=home,blog", async () => {
    expect((await blocks("?pages=home&pages=blog")).text).toBe((await blocks("?pages=home,blog")).text);
  });

  it("names are trimmed and empty names ignored", async () => {
    const spaced = await blocks("?pages=%20home%20,%20%20blog%20");
    expect(spaced.text).toBe((await blocks("?pages=home,blog")).text);
    expect((await blocks("?pages=,home,,")).ids).toEqual(["blk-hero", "blk-announcement"]);
  });

  it("an unknown page answers {\"items\":[]}", async () => {
    const unknown = await blocks("?pages=no-such-page");
    expect(JSON.parse(unknown.text)).toEqual({ items: [] });
    expect((await blocks("?pages=HOME")).ids).toEqual([]);
  });

  it("the names of Object.prototype's members are page names like any other: they match nothing", async () => {
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      expect(JSON.parse((await blocks(`?pages=${name}`)).text), name).toEqual({ items: [] });
      expect((await blocks(`?pages=${name},pricing`)).ids, name).toEqual(["blk-pricing-faq", "blk-pricing-table"]);
      expect((await blocks(`?pages=home&pages=${name}`)).ids, name).toEqual(["blk-hero", "blk-announcement"]);
    }
  });

  it("an empty filter is no filter", async () => {
    expect((await blocks("?pages=")).ids).toEqual(ALL);
    expect((await blocks("?pages=%20,%20,")).ids).toEqual(ALL);
  });

  it("filtered blocks keep exactly the Block shape of the full list", async () => {
    const all = await blocks("");
    const byId = new Map(all.items.map((b) => [b.id, b]));
    for (const query of ["?pages=home", "?pages=pricing,about", "?pages=menu,blog"]) {
      for (const item of (await blocks(query)).items) {
        expect(item).toEqual(byId.get(item.id));
        expect(Object.keys(item).sort()).toEqual(["fields", "id", "name", "slug", "status"]);
      }
    }
  });

  it("another organization's page of the same name is not mixed in", async () => {
    // harbor has a block on "menu"; demo has none.
    expect((await blocks("?pages=menu")).ids).toEqual([]);
  });
});

describe("D10 HTTP details", () => {
  const ORG = api("demo", "organization");

  it("GET answers application/json; charset=utf-8 with a strong ETag and a cacheable Cache-Control", async () => {
    const res = await call(site.url, ORG, { key: DEMO_READ_KEY });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(JSON_TYPE);
    expect(res.headers.get("etag")).toMatch(/^"[^"]+"$/);
    const cache = res.headers.get("cache-control") ?? "";
    expect(cache).toMatch(/(^|,\s*)public(\s*,|$)/);
    expect(cache).toMatch(/(^|,\s*)max-age=\d+(\s*,|$)/);
    expect(cache).not.toMatch(/no-store|private/);
  });

  it("different files have different ETags, the same file the same one", async () => {
    const a = (await call(site.url, ORG, { key: DEMO_READ_KEY })).headers.get("etag");
    const b = (await call(site.url, ORG, { key: DEMO_WRITE_KEY })).headers.get("etag");
    const c = (await call(site.url, api("demo", "blocks"), { key: DEMO_READ_KEY })).headers.get("etag");
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });

  it("HEAD answers the headers of GET and no body", async () => {
    for (const p of [ORG, api("demo", "blocks?pages=home"), api("demo", "contents/by-slug/aeropress-recipes")]) {
      // As the raw HEAD below, which sends no Accept-Encoding: the body fetch reads is then the one sent.
      const get = await call(site.url, p, { key: DEMO_READ_KEY, headers: { "accept-encoding": "identity" } });
      const getBody = Buffer.from(await get.arrayBuffer());
      const wire = await rawExchange(
        site.url,
        `HEAD ${p} HTTP/1.1\r\nHost: test\r\nx-api-key: ${DEMO_READ_KEY}\r\nConnection: close\r\n\r\n`,
      );
      const split = wire.indexOf("\r\n\r\n");
      expect(split).toBeGreaterThan(0);
      // Nothing after the header block: HEAD carries no body.
      expect(wire.length).toBe(split + 4);
      const lines = wire.subarray(0, split).toString("latin1").split("\r\n");
      expect(lines[0]).toBe("HTTP/1.1 200 OK");
      const head = new Map(
        lines.slice(1).map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
      );
      for (const name of ["content-type", "etag", "cache-control", "vary", "access-control-allow-origin", "last-modified"]) {
        expect(head.get(name), name).toBe(get.headers.get(name));
      }
      expect(head.get("content-length")).toBe(String(getBody.length));
    }
  });

  it("If-None-Match with the current ETag answers 304 without a body", async () => {
    const first = await call(site.url, ORG, { key: DEMO_READ_KEY });
    const etag = first.headers.get("etag")!;
    for (const header of [etag, `"stale", ${etag}`, `W/${etag}`, `"a",W/${etag} , "b"`]) {
      const res = await call(site.url, ORG, { key: DEMO_READ_KEY, headers: { "if-none-match": header } });
      expect(res.status, header).toBe(304);
      expect(await res.text()).toBe("");
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("vary")).toBe("x-api-key, Origin, Accept-Encoding");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("cache-control")).toBe(first.headers.get("cache-control"));
    }
  });

  it("If-None-Match with another ETag answers 200 with the body", async () => {
    const res = await call(site.url, ORG, { key: DEMO_READ_KEY, headers: { "if-none-match": '"not-the-etag"' } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }).id).toBe("demo");
  });

  it("after a PATCH the old ETag no longer answers 304", async () => {
    const etag = (await call(site.url, ORG, { key: DEMO_READ_KEY })).headers.get("etag")!;
    const patched = await patchJson(site.url, api("demo", "business-description"), DEMO_WRITE_KEY, {
      businessDescription: `changed ${etag}`,
    });
    expect(patched.status).toBe(200);
    const res = await call(site.url, ORG, { key: DEMO_READ_KEY, headers: { "if-none-match": etag } });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).not.toBe(etag);
  });

  it("a filtered list has its own ETag and answers 304 to it", async () => {
    const home = await call(site.url, api("demo", "blocks?pages=home"), { key: DEMO_READ_KEY });
    const all = await call(site.url, api("demo", "blocks"), { key: DEMO_READ_KEY });
    const etag = home.headers.get("etag")!;
    expect(etag).not.toBe(all.headers.get("etag"));
    const again = await call(site.url, api("demo", "blocks?pages=home"), {
      key: DEMO_READ_KEY,
      headers: { "if-none-match": etag },
    });
    expect(again.status).toBe(304);
  });

  it("every answer carries Vary: x-api-key, Origin, errors, 304s, preflights and PATCHes included; file answers add Accept-Encoding", async () => {
    const etag = (await call(site.url, api("demo", "organization"), { key: DEMO_READ_KEY })).headers.get("etag")!;
    const answers: [string, Response][] = [
      ["200", await call(site.url, api("demo", "organization"), { key: DEMO_READ_KEY })],
      ["304", await call(site.url, api("demo", "organization"), { key: DEMO_READ_KEY, headers: { "if-none-match": etag } })],
      ["401", await call(site.url, api("demo", "organization"))],
      ["403", await call(site.url, api("demo", "organization"), { key: HARBOR_READ_KEY })],
      ["404", await call(site.url, api("demo", "blocks/nope"), { key: DEMO_READ_KEY })],
      ["404 outside", await call(site.url, "/nothing", { key: DEMO_READ_KEY })],
      ["405", await call(site.url, api("demo", "organization"), { method: "POST", key: DEMO_READ_KEY })],
      ["415", await call(site.url, api("demo", "business-description"), { method: "PATCH", key: DEMO_WRITE_KEY, body: "x" })],
      ["422", await patchJson(site.url, api("demo", "business-description"), DEMO_WRITE_KEY, { x: 1 })],
      ["200 PATCH", await patchJson(site.url, api("demo", "business-description"), DEMO_WRITE_KEY, { businessDescription: "v" })],
      ["204", await call(site.url, api("demo", "blocks"), { method: "OPTIONS", headers: { origin: "https://a.example", "access-control-request-method": "GET" } })],
    ];
    for (const [name, res] of answers) {
      const file = name === "200" || name === "304";
      expect(res.headers.get("vary"), name).toBe(file ? "x-api-key, Origin, Accept-Encoding" : "x-api-key, Origin");
      expect(res.headers.get("access-control-allow-origin"), name).toBe("*");
      await res.arrayBuffer();
    }
  });

  it("a trailing slash answers the same as the path without it", async () => {
    for (const rest of ["organization", "blocks", "blocks/blk-hero", "contents/post-0001/references", "categories"]) {
      const plain = await call(site.url, api("demo", rest), { key: DEMO_READ_KEY });
      const slashed = await call(site.url, `${api("demo", rest)}/`, { key: DEMO_READ_KEY });
      expect(plain.status, rest).toBe(200);
      expect(slashed.status, rest).toBe(200);
      expect(slashed.headers.get("etag")).toBe(plain.headers.get("etag"));
      expect(await slashed.text()).toBe(await plain.text());
    }
  });

  it("query parameters other than pages are ignored", async () => {
    const plain = await call(site.url, api("demo", "organization"), { key: DEMO_READ_KEY });
    const queried = await call(site.url, `${api("demo", "organization")}?utm_source=x&pages=home&_=123`, {
      key: DEMO_READ_KEY,
    });
    expect(queried.status).toBe(200);
    expect(queried.headers.get("etag")).toBe(plain.headers.get("etag"));
    expect(await queried.text()).toBe(await plain.text());
    const list = await blocks("?pages=home&limit=1&page=2");
    expect(list.text).toBe((await blocks("?pages=home")).text);
    const contents = await call(site.url, `${api("demo", "contents")}?category=brewing&sort=oldest`, { key: DEMO_READ_KEY });
    const contentsPlain = await call(site.url, api("demo", "contents"), { key: DEMO_READ_KEY });
    expect(await contents.text()).toBe(await contentsPlain.text());
  });
});

describe("D11 CORS", () => {
  const preflight = (p: string, origin?: string) =>
    call(site.url, p, {
      method: "OPTIONS",
      headers: {
        ...(origin ? { origin } : {}),
        "access-control-request-method": "PATCH",
        "access-control-request-headers": "x-api-key, content-type",
      },
    });

  it("a preflight without a key answers 204 allowing GET, HEAD, PATCH, OPTIONS and x-api-key, content-type", async () => {
    for (const p of [api("demo", "organization"), api("demo", "business-offers"), api("demo", "blocks/blk-hero")]) {
      const res = await preflight(p, "https://northwind.example");
      expect(res.status, p).toBe(204);
      expect(await res.text()).toBe("");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const methods = (res.headers.get("access-control-allow-methods") ?? "").split(",").map((m) => m.trim());
      expect(methods).toEqual(expect.arrayContaining(["GET", "HEAD", "PATCH", "OPTIONS"]));
      const headers = (res.headers.get("access-control-allow-headers") ?? "").split(",").map((h) => h.trim().toLowerCase());
      expect(headers).toEqual(expect.arrayContaining(["x-api-key", "content-type"]));
      expect(res.headers.get("vary")).toBe("x-api-key, Origin");
    }
  });

  it("by default a GET answers Access-Control-Allow-Origin: *", async () => {
    const res = await call(site.url, api("demo", "organization"), {
      key: DEMO_READ_KEY,
      headers: { origin: "https://anything.example" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    // The browser may read the ETag for If-Match.
    expect((res.headers.get("access-control-expose-headers") ?? "").toLowerCase()).toContain("etag");
  });

  it("a restricted organization echoes its allowed origin, on preflight, GET and errors", async () => {
    const origin = "https://harbor.example";
    const pre = await preflight(api("harbor", "organization"), origin);
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe(origin);
    expect(pre.headers.get("access-control-allow-methods")).toBeTruthy();

    const get = await call(site.url, api("harbor", "organization"), { key: HARBOR_READ_KEY, headers: { origin } });
    expect(get.status).toBe(200);
    expect(get.headers.get("access-control-allow-origin")).toBe(origin);

    const denied = await call(site.url, api("harbor", "organization"), { headers: { origin } });
    expect(denied.headers.get("access-control-allow-origin")).toBe(origin);
    await expectError(denied, 401, "unauthorized");
  });

  it("a restricted organization gives any other origin no CORS headers, on preflight and GET", async () => {
    const origin = "https://evil.example";
    const pre = await preflight(api("harbor", "organization"), origin);
    const get = await call(site.url, api("harbor", "organization"), { key: HARBOR_READ_KEY, headers: { origin } });
    const none = await call(site.url, api("harbor", "organization"), { key: HARBOR_READ_KEY });
    for (const res of [pre, get, none]) {
      for (const [name] of res.headers) expect(name.startsWith("access-control-"), name).toBe(false);
      expect(res.headers.get("vary")).toBe(res === pre ? "x-api-key, Origin" : "x-api-key, Origin, Accept-Encoding");
    }
    // A look-alike of the allowed origin is another origin.
    const lookalike = await call(site.url, api("harbor", "organization"), {
      key: HARBOR_READ_KEY,
      headers: { origin: "https://harbor.example.evil.example" },
    });
    expect(lookalike.headers.get("access-control-allow-origin")).toBeNull();
  });
});
