/**
 * The write proxy: D7's rules on the two PATCH bodies, the stored value read
 * back through GET organization, If-Match, and the promise that a refused PATCH
 * changes nothing, not a row and not a byte of the tree.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { dumpBusinessTables, storedBusiness } from "../fixtures/database.js";
import { organizationFile, snapshotTree } from "../fixtures/tree.js";
import { type Served, startSite } from "../fixtures/served-site.js";
import { api, call, detailPaths, expectError, patchJson, rawRequest } from "../fixtures/http.js";
import type { Organization, BusinessOffer as Offer } from "../../src/model/api.js";

type Site = Served & { stop(): Promise<void> };
let site: Site;

beforeAll(async () => {
  site = await startSite({ writeRate: 100_000 });
});
afterAll(() => site?.stop());
afterEach(() => {
  // No PATCH body, accepted or refused, may pollute the prototype of the process serving it.
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty("polluted");
});

const DESCRIPTION = api("demo", "business-description");
const OFFERS = api("demo", "business-offers");
const ORG = api("demo", "organization");


async function readOrganization(): Promise<Organization> {
  const res = await call(site.url, ORG, { key: DEMO_READ_KEY });
  expect(res.status).toBe(200);
  return (await res.json()) as Organization;
}

/** PATCHes the description, expects 200, and returns what the response says was stored. */
async function storeDescription(value: string): Promise<string> {
  const res = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: value });
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { businessDescription: string };
  expect(Object.keys(body)).toEqual(["businessDescription"]);
  return body.businessDescription;
}

async function storeOffers(offers: unknown[]): Promise<Offer[]> {
  const res = await patchJson(site.url, OFFERS, DEMO_WRITE_KEY, { businessOffers: offers });
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { businessOffers: Offer[] };
  expect(Object.keys(body)).toEqual(["businessOffers"]);
  return body.businessOffers;
}

async function refusedDescription(body: unknown): Promise<string[]> {
  const res = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, body);
  return detailPaths(await expectError(res, 422, "validation_failed"));
}

async function refusedOffers(body: unknown): Promise<string[]> {
  const res = await patchJson(site.url, OFFERS, DEMO_WRITE_KEY, body);
  return detailPaths(await expectError(res, 422, "validation_failed"));
}

const offer = (i: number, extra: Partial<Offer> = {}): Offer => ({
  name: `Offer ${i}`,
  description: `What offer ${i} is about.`,
  link: `https://northwind.example/offers/${i}`,
  ...extra,
});

describe("PATCH then GET", () => {
  it("the PATCH answers the stored description and GET organization shows it", async () => {
    const stored = await storeDescription("We roast coffee by the sea.");
    expect(stored).toBe("We roast coffee by the sea.");
    const org = await readOrganization();
    expect(org.businessDescription).toBe(stored);
    expect(storedBusiness(site.db, "demo").businessDescription).toBe(stored);
  });

  it("the PATCH answers the stored offers, in body order, and GET organization shows them", async () => {
    const offers = [offer(2), offer(1, { link: undefined }), offer(3)];
    const stored = await storeOffers(offers);
    const expected = [offer(2), { name: "Offer 1", description: "What offer 1 is about." }, offer(3)];
    expect(stored).toEqual(expected);
    expect((await readOrganization()).businessOffers).toEqual(expected);
    expect(storedBusiness(site.db, "demo").businessOffers).toEqual(expected);
  });

  it("one organization's PATCH leaves the other organization's file as it was", async () => {
    const before = await organizationFile(site, "harbor");
    await storeDescription("Only demo changes.");
    expect(await organizationFile(site, "harbor")).toEqual(before);
    const harbor = await call(site.url, api("harbor", "organization"), { key: HARBOR_READ_KEY });
    expect(((await harbor.json()) as Organization).businessDescription).toBe("");
  });
});

describe("D7 businessDescription", () => {
  it("surrounding whitespace is trimmed and the trimmed value stored", async () => {
    expect(await storeDescription("  \n\t Roasted daily. \n ")).toBe("Roasted daily.");
    expect((await readOrganization()).businessDescription).toBe("Roasted daily.");
  });

  it("CR LF pairs are stored as LF", async () => {
    expect(await storeDescription("Line one\r\nLine two\r\n\r\nLine four")).toBe("Line one\nLine two\n\nLine four");
    expect((await readOrganization()).businessDescription).toBe("Line one\nLine two\n\nLine four");
  });

  it("tab and newline inside the text are kept", async () => {
    expect(await storeDescription("Beans:\tEthiopia\nRoast:\tlight")).toBe("Beans:\tEthiopia\nRoast:\tlight");
  });

  it.each([
    ["NUL", "\u0000"],
    ["BEL", "\u0007"],
    ["a lone CR", "\r"],
    ["ESC", "\u001b"],
    ["DEL", "\u007f"],
    ["a C1 control (NEL)", "\u0085"],
    ["a C1 control (CSI)", "\u009b"],
  ])("%s inside the text is refused with 422", async (_name, control) => {
    expect(await refusedDescription({ businessDescription: `before${control}after` })).toEqual(["businessDescription"]);
  });

  it("10,000 code points are accepted, counted as code points (10,000 emoji)", async () => {
    const emoji = "😀".repeat(10_000);
    expect(await storeDescription(emoji)).toBe(emoji);
    expect((await readOrganization()).businessDescription).toBe(emoji);
  });

  it("10,001 code points are refused with 422", async () => {
    expect(await refusedDescription({ businessDescription: "😀".repeat(10_001) })).toEqual(["businessDescription"]);
    expect(await refusedDescription({ businessDescription: "a".repeat(10_001) })).toEqual(["businessDescription"]);
  });

  it("the limit applies after trimming", async () => {
    const text = "a".repeat(10_000);
    expect(await storeDescription(`   ${text}   `)).toBe(text);
  });

  it('"" is allowed and clears the description', async () => {
    await storeDescription("Something to clear.");
    expect(await storeDescription("")).toBe("");
    expect((await readOrganization()).businessDescription).toBe("");
  });

  it.each([
    ["a number", { businessDescription: 5 }, ["businessDescription"]],
    ["null", { businessDescription: null }, ["businessDescription"]],
    ["a missing property", {}, ["businessDescription"]],
    ["an unknown property beside it", { businessDescription: "ok", tone: "warm" }, ["tone"]],
    ["the other endpoint's property", { businessOffers: [] }, ["businessDescription", "businessOffers"]],
  ])("%s is refused with 422 and the path of the problem", async (_name, body, paths) => {
    expect((await refusedDescription(body)).sort()).toEqual(paths);
  });

  it("a missing member is said to be required; a wrong type keeps what was received", async () => {
    const details = async (url: string, body: unknown) =>
      (await expectError(await patchJson(site.url, url, DEMO_WRITE_KEY, body), 422, "validation_failed")).error.details;
    expect(await details(DESCRIPTION, {})).toEqual([{ path: "businessDescription", message: "is required" }]);
    expect(await details(OFFERS, { businessOffers: [{ description: "x" }] })).toEqual([
      { path: "businessOffers.0.name", message: "is required" },
    ]);
    expect(await details(DESCRIPTION, { businessDescription: null })).toEqual([
      { path: "businessDescription", message: expect.stringContaining("received null") },
    ]);
  });

  it.each([
    ["an array", []],
    ["a string", "text"],
    ["null", null],
  ])("a body that is %s is refused with 422", async (_name, body) => {
    await refusedDescription(JSON.stringify(body));
  });
});

describe("D7 businessOffers", () => {
  it("50 offers are accepted, 51 refused", async () => {
    const fifty = Array.from({ length: 50 }, (_, i) => offer(i));
    expect(await storeOffers(fifty)).toEqual(fifty);
    expect((await readOrganization()).businessOffers).toHaveLength(50);
    expect(await refusedOffers({ businessOffers: [...fifty, offer(50)] })).toEqual(["businessOffers"]);
  });

  it("a name of 1 and of 120 characters is accepted, an empty, blank or 121-character name refused", async () => {
    const long = "é".repeat(120);
    expect(await storeOffers([offer(1, { name: "A" }), offer(2, { name: long })])).toEqual([
      offer(1, { name: "A" }),
      offer(2, { name: long }),
    ]);
    expect(await refusedOffers({ businessOffers: [offer(1, { name: "" })] })).toEqual(["businessOffers.0.name"]);
    expect(await refusedOffers({ businessOffers: [offer(1, { name: " \n\t " })] })).toEqual(["businessOffers.0.name"]);
    expect(await refusedOffers({ businessOffers: [offer(1), offer(2, { name: "é".repeat(121) })] })).toEqual([
      "businessOffers.1.name",
    ]);
  });

  it("a description of 1 and of 2,000 characters is accepted, an empty or 2,001-character one refused", async () => {
    const long = "😀".repeat(2_000);
    expect(await storeOffers([offer(1, { description: "B" }), offer(2, { description: long })])).toEqual([
      offer(1, { description: "B" }),
      offer(2, { description: long }),
    ]);
    expect(await refusedOffers({ businessOffers: [offer(1, { description: "" })] })).toEqual([
      "businessOffers.0.description",
    ]);
    expect(await refusedOffers({ businessOffers: [offer(1, { description: "😀".repeat(2_001) })] })).toEqual([
      "businessOffers.0.description",
    ]);
  });

  it("names and descriptions are trimmed, CR LF folded, and control characters refused", async () => {
    expect(await storeOffers([{ name: "  Class  ", description: "\r\n Two hours\r\nhands-on \r\n" }])).toEqual([
      { name: "Class", description: "Two hours\nhands-on" },
    ]);
    expect(await refusedOffers({ businessOffers: [offer(1, { name: "Bad\u0000name" })] })).toEqual([
      "businessOffers.0.name",
    ]);
    expect(await refusedOffers({ businessOffers: [offer(1, { description: "Bad\u0085text" })] })).toEqual([
      "businessOffers.0.description",
    ]);
  });

  it("http: and https: links are accepted", async () => {
    const offers = [offer(1, { link: "http://northwind.example/a" }), offer(2, { link: "https://northwind.example/b?x=1#y" })];
    expect(await storeOffers(offers)).toEqual(offers);
  });

  it.each([
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "/relative/path",
    "relative/path",
    "//evil.example/x",
    "ftp://northwind.example/file",
    "mailto:hello@northwind.example",
    "https://",
    "",
  ])("the link %j is refused at businessOffers.N.link", async (link) => {
    expect(await refusedOffers({ businessOffers: [offer(1), offer(2, { link })] })).toEqual(["businessOffers.1.link"]);
  });

  it('"link": null stores an offer without a link member', async () => {
    const stored = await storeOffers([{ name: "No link", description: "Walk in.", link: null }]);
    expect(stored).toEqual([{ name: "No link", description: "Walk in." }]);
    expect(stored[0]).not.toHaveProperty("link");
    const org = await readOrganization();
    expect(org.businessOffers).toEqual([{ name: "No link", description: "Walk in." }]);
    expect(org.businessOffers[0]).not.toHaveProperty("link");
  });

  it("[] clears every offer", async () => {
    await storeOffers([offer(1), offer(2)]);
    expect(await storeOffers([])).toEqual([]);
    expect((await readOrganization()).businessOffers).toEqual([]);
    expect(storedBusiness(site.db, "demo").businessOffers).toEqual([]);
  });

  it.each([
    ["an unknown property of an offer", { businessOffers: [{ ...offer(1), price: 10 }] }, ["businessOffers.0.price"]],
    ["an unknown property beside the list", { businessOffers: [], extra: true }, ["extra"]],
    ["an offer without a name", { businessOffers: [{ description: "x" }] }, ["businessOffers.0.name"]],
    ["an offer that is a string", { businessOffers: ["offer"] }, ["businessOffers.0"]],
    ["a list that is an object", { businessOffers: {} }, ["businessOffers"]],
  ])("%s is refused with 422 and its path", async (_name, body, paths) => {
    expect(await refusedOffers(body)).toEqual(paths);
  });
});

describe("D7 prototype keys", () => {
  it.each([
    ["__proto__ beside the description", DESCRIPTION, '{"businessDescription":"x","__proto__":{"polluted":true}}', "__proto__"],
    [
      "constructor beside the description",
      DESCRIPTION,
      '{"businessDescription":"x","constructor":{"prototype":{"polluted":true}}}',
      "constructor",
    ],
    ["__proto__ beside the offers", OFFERS, '{"businessOffers":[],"__proto__":{"polluted":true}}', "__proto__"],
    [
      "__proto__ inside an offer",
      OFFERS,
      '{"businessOffers":[{"name":"a","description":"b","__proto__":{"polluted":true}}]}',
      "businessOffers.0.__proto__",
    ],
    [
      "constructor inside an offer",
      OFFERS,
      '{"businessOffers":[{"name":"a","description":"b","constructor":{"prototype":{"polluted":true}}}]}',
      "businessOffers.0.constructor",
    ],
  ])("%s is refused with 422 and pollutes nothing", async (_name, p, body, detail) => {
    const res = await patchJson(site.url, p, DEMO_WRITE_KEY, body);
    expect(detailPaths(await expectError(res, 422, "validation_failed"))).toEqual([detail]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("a refused PATCH changes nothing", () => {
  it("leaves every row and every file of the tree byte-identical", async () => {
    await storeDescription("The value before the refusals.");
    await storeOffers([offer(1), offer(2, { link: undefined })]);
    const rows = dumpBusinessTables(site.db);
    const tree = await snapshotTree(site);
    const etag = (await call(site.url, ORG, { key: DEMO_READ_KEY })).headers.get("etag");

    const json = { "content-type": "application/json" };
    const refusals: [string, () => Promise<Response | { status: number }>][] = [
      ["no key", () => call(site.url, DESCRIPTION, { method: "PATCH", headers: json, body: '{"businessDescription":"A"}' })],
      ["read key", () => patchJson(site.url, DESCRIPTION, DEMO_READ_KEY, { businessDescription: "B" })],
      ["other org", () => patchJson(site.url, DESCRIPTION, HARBOR_READ_KEY, { businessDescription: "C" })],
      ["text/plain", () => call(site.url, DESCRIPTION, { method: "PATCH", key: DEMO_WRITE_KEY, headers: { "content-type": "text/plain" }, body: '{"businessDescription":"D"}' })],
      ["malformed", () => patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, '{"businessDescription":"E"')],
      ["control char", () => patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "F\u0000" })],
      ["too long", () => patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "G".repeat(10_001) })],
      ["unknown member", () => patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "H", x: 1 })],
      ["bad link", () => patchJson(site.url, OFFERS, DEMO_WRITE_KEY, { businessOffers: [offer(9, { link: "javascript:x" })] })],
      ["51 offers", () => patchJson(site.url, OFFERS, DEMO_WRITE_KEY, { businessOffers: Array.from({ length: 51 }, (_, i) => offer(i)) })],
      ["half valid list", () => patchJson(site.url, OFFERS, DEMO_WRITE_KEY, { businessOffers: [offer(7), offer(8, { name: "" })] })],
      ["stale If-Match", () => patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "I" }, { "if-match": '"0000"' })],
      ["GET on PATCH path", () => call(site.url, OFFERS, { key: DEMO_WRITE_KEY })],
      [
        "too large",
        () =>
          rawRequest(site.url, {
            method: "PATCH",
            path: DESCRIPTION,
            headers: { "x-api-key": DEMO_WRITE_KEY, "content-type": "application/json" },
            chunks: ['{"businessDescription":"', "J".repeat(70_000), '"}'],
          }),
      ],
    ];
    for (const [name, send] of refusals) {
      const res = await send();
      expect(res.status, name).toBeGreaterThanOrEqual(400);
    }

    expect(dumpBusinessTables(site.db)).toBe(rows);
    expect(await snapshotTree(site)).toEqual(tree);
    const after = await call(site.url, ORG, { key: DEMO_READ_KEY });
    expect(after.headers.get("etag")).toBe(etag);
    expect(((await after.json()) as Organization).businessDescription).toBe("The value before the refusals.");
  });
});

describe("a body in another charset", () => {
  // D6: application/json, optionally `; charset=utf-8`. A Latin-1 body is refused for its type, whatever its bytes say.
  it.each(["latin1", "iso-8859-1", "ISO-8859-1", '"iso-8859-1"'])(
    "charset=%s answers 415 unsupported_media_type and changes nothing",
    async (charset) => {
      await storeDescription("The value before the Latin-1 bodies.");
      const rows = dumpBusinessTables(site.db);
      const tree = await snapshotTree(site);
      const bodies = [
        // ASCII only: the same bytes in UTF-8, so nothing but the media type can refuse it.
        Buffer.from('{"businessDescription":"plain ASCII"}', "latin1"),
        // é as Latin-1's one byte 0xE9, which is not UTF-8: still 415, never 400 malformed_json.
        Buffer.from('{"businessDescription":"caf\u00e9"}', "latin1"),
      ];
      for (const body of bodies) {
        const res = await call(site.url, DESCRIPTION, {
          method: "PATCH",
          key: DEMO_WRITE_KEY,
          headers: { "content-type": `application/json; charset=${charset}` },
          body,
        });
        await expectError(res, 415, "unsupported_media_type");
      }
      expect(dumpBusinessTables(site.db)).toBe(rows);
      expect(await snapshotTree(site)).toEqual(tree);
      expect((await readOrganization()).businessDescription).toBe("The value before the Latin-1 bodies.");
    },
  );
});

describe("If-Match", () => {
  it("the current ETag of GET organization lets the PATCH through", async () => {
    const etag = (await call(site.url, ORG, { key: DEMO_READ_KEY })).headers.get("etag")!;
    const res = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Guarded write." }, { "if-match": etag });
    expect(res.status).toBe(200);
    expect((await readOrganization()).businessDescription).toBe("Guarded write.");
  });

  it("a stale ETag answers 412 precondition_failed and changes nothing", async () => {
    const stale = (await call(site.url, ORG, { key: DEMO_READ_KEY })).headers.get("etag")!;
    await storeDescription("Someone else wrote first.");
    const rows = dumpBusinessTables(site.db);
    const tree = await snapshotTree(site);

    const description = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Lost write." }, { "if-match": stale });
    await expectError(description, 412, "precondition_failed");
    const offers = await patchJson(site.url, OFFERS, DEMO_WRITE_KEY, { businessOffers: [] }, { "if-match": stale });
    await expectError(offers, 412, "precondition_failed");

    expect(dumpBusinessTables(site.db)).toBe(rows);
    expect(await snapshotTree(site)).toEqual(tree);
    expect((await readOrganization()).businessDescription).toBe("Someone else wrote first.");
  });
});

describe("durability", () => {
  it("the server's database connection syncs every commit, so an answered PATCH survives a power loss", () => {
    // 2 is FULL; better-sqlite3's build default for WAL is 1 (NORMAL), which does not sync a commit.
    expect(site.running.db.pragma("synchronous", { simple: true })).toBe(2);
    expect(site.running.db.pragma("journal_mode", { simple: true })).toBe("wal");
  });
});
