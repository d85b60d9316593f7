/**
 * Writes under load: concurrent PATCHes lose no update and never show a reader
 * a torn file.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  DEMO_READ_KEY,
  DEMO_WRITE_KEY,
  api,
  call,
  organizationFile,
  patchJson,
  sha256Hex,
  startSite,
  storedBusiness,
  type Served,
} from "./helpers.js";
import type { Organization, BusinessOffer as Offer } from "../../src/model/api.js";

type Site = Served & { stop(): Promise<void> };
let site: Site | undefined;
afterEach(async () => {
  await site?.stop();
  site = undefined;
});

const ORG = api("demo", "organization");
const DESCRIPTION = api("demo", "business-description");
const OFFERS = api("demo", "business-offers");


const offersOf = (i: number): Offer[] => [
  { name: `Batch ${i} first`, description: `First offer of batch ${i}.`, link: `https://northwind.example/${i}/1` },
  { name: `Batch ${i} second`, description: `Second offer of batch ${i}.` },
  { name: `Batch ${i} third`, description: `Third offer of batch ${i}.`, link: `https://northwind.example/${i}/3` },
];

/** GETs the organization until `stop()` says so; every answer must be a whole, self-consistent file. */
function readInALoop(url: string) {
  let running = true;
  const seen: { status: number; etag: string | null; text: string }[] = [];
  const done = (async () => {
    while (running) {
      const res = await call(url, ORG, { key: DEMO_READ_KEY });
      seen.push({ status: res.status, etag: res.headers.get("etag"), text: await res.text() });
    }
  })();
  return {
    seen,
    async stop() {
      running = false;
      await done;
      return seen;
    },
  };
}

describe("50 concurrent PATCHes", () => {
  it("lose no update and never expose a torn file to a concurrent reader", async () => {
    site = await startSite({ writeRate: 100_000 });
    const url = site.url;
    const initialEtag = (await call(url, ORG, { key: DEMO_READ_KEY })).headers.get("etag")!;
    const readers = [readInALoop(url), readInALoop(url)];

    const sentDescriptions = new Map<string, number>();
    const sentOffers = new Map<string, number>();
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        if (i % 2 === 0) {
          const value = `Concurrent description ${i}: ${"☕".repeat(i * 20)}.`;
          sentDescriptions.set(value, i);
          const res = await patchJson(url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: value });
          return { i, status: res.status, etag: res.headers.get("etag"), body: await res.json(), sent: { businessDescription: value } };
        }
        const value = offersOf(i);
        sentOffers.set(JSON.stringify(value), i);
        const res = await patchJson(url, OFFERS, DEMO_WRITE_KEY, { businessOffers: value });
        return { i, status: res.status, etag: res.headers.get("etag"), body: await res.json(), sent: { businessOffers: value } };
      }),
    );
    const seen = (await Promise.all(readers.map((r) => r.stop()))).flat();

    // Every PATCH was stored and answered with what it stored.
    for (const r of results) {
      expect(r.status, `PATCH ${r.i}`).toBe(200);
      expect(r.body).toEqual(r.sent);
      expect(r.etag).toMatch(/^"[0-9a-f]{64}"$/);
    }

    // Every read was a whole file of a state that really existed: its bytes hash to
    // its ETag, and that ETag is the one a PATCH announced (or the one before them all).
    const states = new Set([initialEtag, ...results.map((r) => r.etag)]);
    expect(seen.length).toBeGreaterThan(0);
    for (const read of seen) {
      expect(read.status).toBe(200);
      const org = JSON.parse(read.text) as Organization;
      expect(org.id).toBe("demo");
      expect(read.etag).toBe(`"${sha256Hex(read.text)}"`);
      expect(states.has(read.etag!)).toBe(true);
    }

    // The database holds one of the sent values of each attribute, whole.
    const stored = storedBusiness(site.db, "demo");
    expect(sentDescriptions.has(stored.businessDescription)).toBe(true);
    expect(sentOffers.has(JSON.stringify(stored.businessOffers))).toBe(true);

    // The file equals the database, and is the state the last committed PATCH announced.
    const file = JSON.parse((await organizationFile(site, "demo")).toString("utf8")) as Organization;
    expect({ businessDescription: file.businessDescription, businessOffers: file.businessOffers }).toEqual(stored);
    const final = await call(url, ORG, { key: DEMO_READ_KEY });
    const finalEtag = final.headers.get("etag");
    expect(results.filter((r) => r.etag === finalEtag)).toHaveLength(1);
    expect(await final.json()).toEqual(file);
  });
});
