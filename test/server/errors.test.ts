/**
 * D6: every failure answers {"error": {"code", "message"[, "details"]}} as
 * application/json; charset=utf-8, with the status and code the decision names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rm, writeFile } from "node:fs/promises";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { pagesFileOf } from "../../src/emit/tree-store.js";
import { liveGenerationOf } from "../fixtures/tree.js";
import { dumpBusinessTables, withDb } from "../fixtures/database.js";
import { type Served, startSite } from "../fixtures/served-site.js";
import { api, call, detailPaths, expectError, JSON_TYPE, patchJson, rawExchange, rawRequest } from "../fixtures/http.js";

type Site = Served & { stop(): Promise<void> };
let site: Site;

beforeAll(async () => {
  site = await startSite({ writeRate: 100_000 });
});
afterAll(() => site?.stop());

const DESCRIPTION = api("demo", "business-description");
const OFFERS = api("demo", "business-offers");

describe("404 not_found", () => {
  it.each([
    ["an unknown block id", "blocks/blk-nope"],
    ["an unknown block slug", "blocks/by-slug/no-such-block"],
    ["a draft block by id", "blocks/blk-holiday-promo"],
    ["a draft block by slug", "blocks/by-slug/holiday-promo"],
    ["an archived block by id", "blocks/blk-summer-sale"],
    ["an unknown content id", "contents/post-9999"],
    ["an unknown content slug", "contents/by-slug/no-such-post"],
    ["a draft post by id", "contents/post-0016"],
    ["a draft post by slug", "contents/by-slug/anniversary-blend"],
    ["the references of a draft post", "contents/post-0016/references"],
    ["an archived post", "contents/post-0017"],
    ["a scheduled post", "contents/by-slug/centennial-reserve"],
    ["a section the interface does not have", "settings"],
    ["a deeper path the interface does not have", "blocks/blk-hero/fields"],
  ])("%s answers 404 not_found", async (_name, rest) => {
    await expectError(await call(site.url, api("demo", rest), { key: DEMO_READ_KEY }), 404, "not_found");
  });

  it.each(["/", "/api", "/api/organizations", "/api/organizations/demo", "/favicon.ico", "/index.html"])(
    "%s is outside the interface and answers 404 not_found",
    async (p) => {
      await expectError(await call(site.url, p, { key: DEMO_READ_KEY }), 404, "not_found");
    },
  );

  it("a published block and post are found, so the 404s above are not a broken tree", async () => {
    expect((await call(site.url, api("demo", "blocks/blk-hero"), { key: DEMO_READ_KEY })).status).toBe(200);
    expect((await call(site.url, api("demo", "contents/post-0001"), { key: DEMO_READ_KEY })).status).toBe(200);
  });
});

describe("405 method_not_allowed", () => {
  it.each(["POST", "DELETE", "PUT", "PATCH"])("%s on a GET path answers 405 with Allow", async (method) => {
    const res = await call(site.url, api("demo", "organization"), {
      method,
      key: DEMO_WRITE_KEY,
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    await expectError(res, 405, "method_not_allowed");
  });

  it.each([DESCRIPTION, OFFERS])("GET and HEAD on the PATCH path %s answer 405 with Allow", async (p) => {
    const get = await call(site.url, p, { key: DEMO_WRITE_KEY });
    expect(get.headers.get("allow")).toBe("PATCH, OPTIONS");
    await expectError(get, 405, "method_not_allowed");
    const head = await call(site.url, p, { method: "HEAD", key: DEMO_WRITE_KEY });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("PATCH, OPTIONS");
    const post = await call(site.url, p, { method: "POST", key: DEMO_WRITE_KEY, body: "{}" });
    expect(post.headers.get("allow")).toBe("PATCH, OPTIONS");
    await expectError(post, 405, "method_not_allowed");
  });
});

describe("PATCH bodies", () => {
  it("text/plain answers 415 unsupported_media_type", async () => {
    const res = await call(site.url, DESCRIPTION, {
      method: "PATCH",
      key: DEMO_WRITE_KEY,
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ businessDescription: "plain" }),
    });
    await expectError(res, 415, "unsupported_media_type");
  });

  it("a body without a content type answers 415 unsupported_media_type", async () => {
    const body = JSON.stringify({ businessDescription: "untyped" });
    const res = await rawRequest(site.url, {
      method: "PATCH",
      path: DESCRIPTION,
      headers: { "x-api-key": DEMO_WRITE_KEY, "content-length": String(Buffer.byteLength(body)) },
      chunks: [body],
    });
    expect(res.headers["content-type"]).toBe(JSON_TYPE);
    await expectError(res, 415, "unsupported_media_type");
  });

  it("application/json with a utf-8 charset parameter is accepted", async () => {
    for (const type of ["application/json; charset=utf-8", "Application/JSON;charset=UTF-8", "application/json"]) {
      const res = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: `typed ${type}` }, {
        "content-type": type,
      });
      expect(res.status, type).toBe(200);
      expect(await res.json()).toEqual({ businessDescription: `typed ${type}` });
    }
  });

  it("a declared body over 64 KiB answers 413 payload_too_large", async () => {
    const body = JSON.stringify({ businessDescription: "x".repeat(64 * 1024) });
    const res = await rawRequest(site.url, {
      method: "PATCH",
      path: DESCRIPTION,
      headers: {
        "x-api-key": DEMO_WRITE_KEY,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
      },
      chunks: [body],
    });
    await expectError(res, 413, "payload_too_large");
  });

  it("a chunked body without content-length that grows over 64 KiB answers 413 payload_too_large", async () => {
    const before = dumpBusinessTables(site.db);
    const piece = "y".repeat(8 * 1024);
    const res = await rawRequest(site.url, {
      method: "PATCH",
      path: DESCRIPTION,
      headers: { "x-api-key": DEMO_WRITE_KEY, "content-type": "application/json" },
      chunks: ['{"businessDescription":"', ...Array.from({ length: 9 }, () => piece), '"}'],
    });
    expect(res.headers["content-length"]).toBeDefined();
    await expectError(res, 413, "payload_too_large");
    expect(dumpBusinessTables(site.db)).toBe(before);
  });

  it("a chunked body under 64 KiB is read whole", async () => {
    const res = await rawRequest(site.url, {
      method: "PATCH",
      path: DESCRIPTION,
      headers: { "x-api-key": DEMO_WRITE_KEY, "content-type": "application/json" },
      chunks: ['{"businessDescription":', '"sent in', " pieces", '"}'],
    });
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ businessDescription: "sent in pieces" });
  });

  it.each([
    ["text that is not JSON", "{not json"],
    ["an empty body", ""],
    ["a truncated object", '{"businessDescription": "abc"'],
  ])("%s answers 400 malformed_json", async (_name, body) => {
    const res = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, body);
    await expectError(res, 400, "malformed_json");
  });

  it("bytes that are not UTF-8 answer 400 malformed_json", async () => {
    const res = await call(site.url, DESCRIPTION, {
      method: "PATCH",
      key: DEMO_WRITE_KEY,
      headers: { "content-type": "application/json" },
      body: Buffer.concat([Buffer.from('{"businessDescription":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    });
    await expectError(res, 400, "malformed_json");
  });

  it("JSON that breaks the rules answers 422 validation_failed with the path of each problem", async () => {
    const res = await patchJson(site.url, OFFERS, DEMO_WRITE_KEY, {
      businessOffers: [
        { name: "Fine", description: "Fine", link: "https://ok.example" },
        { name: "", description: "Fine" },
      ],
    });
    const body = await expectError(res, 422, "validation_failed");
    expect(detailPaths(body)).toEqual(["businessOffers.1.name"]);
    for (const detail of body.error.details ?? []) expect(detail.message.length).toBeGreaterThan(0);

    const link = await patchJson(site.url, OFFERS, DEMO_WRITE_KEY, {
      businessOffers: [{ name: "A", description: "B", link: "javascript:alert(1)" }],
    });
    expect(detailPaths(await expectError(link, 422, "validation_failed"))).toEqual(["businessOffers.0.link"]);
  });
});

describe("429 rate_limited", () => {
  it("a key over --write-rate gets 429 with Retry-After, refused requests counted", async () => {
    const limited = await startSite({ writeRate: 3 });
    try {
      const before = dumpBusinessTables(limited.db);
      // Three refused PATCHes (two invalid, one malformed) use up the allowance.
      const refused = [
        await patchJson(limited.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: 5 }),
        await patchJson(limited.url, OFFERS, DEMO_WRITE_KEY, { businessOffers: "none" }),
        await patchJson(limited.url, DESCRIPTION, DEMO_WRITE_KEY, "{"),
      ];
      expect(refused.map((r) => r.status)).toEqual([422, 422, 400]);

      const res = await patchJson(limited.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "one too many" });
      const retryAfter = res.headers.get("retry-after");
      expect(retryAfter).toMatch(/^[1-9]\d*$/);
      await expectError(res, 429, "rate_limited");
      expect(dumpBusinessTables(limited.db)).toBe(before);

      // The limit is per write: reads with the same key go on.
      expect((await call(limited.url, api("demo", "organization"), { key: DEMO_WRITE_KEY })).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});

describe("500 internal", () => {
  it("an unexpected failure answers 500 internal without a stack or a server path, and logs the stack", async () => {
    const broken = await startSite({ writeRate: 100_000 });
    try {
      // An admin tool renames a table under the running server: the PATCH's SQL fails.
      withDb(broken.db, (db) => db.exec("ALTER TABLE business_offers RENAME TO business_offers_moved"));
      const res = await patchJson(broken.url, OFFERS, DEMO_WRITE_KEY, { businessOffers: [] });
      const body = await expectError(res, 500, "internal");
      expect(JSON.stringify(body)).not.toContain("business_offers");
      expect(JSON.stringify(body)).not.toContain(broken.dir);
      const logged = broken.logs.find((line) => line.level === "error");
      expect(String(logged?.error)).toContain("business_offers");
    } finally {
      await broken.stop();
    }
  });

  it.each([
    ["missing", (file: string) => rm(file)],
    ["not JSON", (file: string) => writeFile(file, "{ not json")],
  ])("a ?pages= read whose page-membership file is %s answers 500 internal and logs why, not an empty list", async (_name, damage) => {
    const broken = await startSite({ writeRate: 100_000 });
    try {
      const target = api("demo", "blocks?pages=home");
      expect((await call(broken.url, target, { key: DEMO_READ_KEY })).status).toBe(200);
      await damage(pagesFileOf(await liveGenerationOf(broken.out), "harbor"));
      await expectError(await call(broken.url, api("harbor", "blocks?pages=home"), { key: HARBOR_READ_KEY }), 500, "internal");
      expect(broken.logs.filter((line) => line.level === "error")).toHaveLength(1);
    } finally {
      await broken.stop();
    }
  });
});

describe("errors on a kept-alive connection", () => {
  it("an error answer to a pipelined request leaves the answers after it on the same connection", async () => {
    const get = (key: string, last = false) =>
      `GET ${api("demo", "organization")} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n${last ? "Connection: close\r\n" : ""}\r\n`;
    const bytes = await rawExchange(site.url, get(DEMO_READ_KEY) + get("cdsnap_not_a_key") + get(DEMO_READ_KEY, true));
    const statuses = [...bytes.toString("latin1").matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([200, 401, 200]);
  });
});
