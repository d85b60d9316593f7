/**
 * Writes under load: concurrent PATCHes lose no update and never show a reader
 * a torn file. PATCHes that arrive together share one transaction (group
 * commit), so If-Match and the answered ETags must hold write by write inside it.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { dumpBusinessTables, storedBusiness, withDb } from "../fixtures/database.js";
import { organizationFile, sha256Hex } from "../fixtures/tree.js";
import { type Served, startSite } from "../fixtures/served-site.js";
import { api, call, expectError, patchJson } from "../fixtures/http.js";
import { pollUntil } from "../fixtures/wait.js";
import { createKey } from "../../src/db/keys.js";
import type { Organization, BusinessOffer as Offer } from "../../src/model/api.js";
import { canonicalJson } from "../../src/render/canonical-json.js";
import { fileEtagOf } from "../../src/content-coding.js";

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
      // Read as fetch asks (gzip when 1 KiB or more): a coding's ETag names the file's bytes before its suffix.
      expect(read.etag).toMatch(/^"[0-9a-f]{64}(-gzip)?"$/);
      expect(fileEtagOf(read.etag!)).toBe(`"${sha256Hex(read.text)}"`);
      expect(states.has(fileEtagOf(read.etag!))).toBe(true);
    }

    // The database holds one of the sent values of each attribute, whole.
    const stored = storedBusiness(site.db, "demo");
    expect(sentDescriptions.has(stored.businessDescription)).toBe(true);
    expect(sentOffers.has(JSON.stringify(stored.businessOffers))).toBe(true);

    // The file equals the database, and is the state the last committed PATCH announced.
    const file = JSON.parse((await organizationFile(site, "demo")).toString("utf8")) as Organization;
    expect({ businessDescription: file.businessDescription, businessOffers: file.businessOffers }).toEqual(stored);
    const final = await call(url, ORG, { key: DEMO_READ_KEY });
    const finalEtag = fileEtagOf(final.headers.get("etag")!);
    expect(results.filter((r) => r.etag === finalEtag)).toHaveLength(1);
    expect(await final.json()).toEqual(file);
  });
});

interface Sent {
  path: string;
  body: unknown;
  headers?: Record<string, string>;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function requestText(url: string, key: string, { path, body, headers = {} }: Sent): Buffer {
  const bytes = Buffer.from(JSON.stringify(body), "utf8");
  const lines = [
    `PATCH ${path} HTTP/1.1`,
    `Host: ${new URL(url).host}`,
    `x-api-key: ${key}`,
    "Content-Type: application/json",
    `Content-Length: ${bytes.length}`,
    "Connection: close",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), bytes]);
}

function parseAnswer(bytes: Buffer): Answer {
  const end = bytes.indexOf("\r\n\r\n");
  const [statusLine, ...headerLines] = bytes.subarray(0, end).toString("latin1").split("\r\n");
  const headers = Object.fromEntries(
    headerLines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
  );
  return { status: Number(statusLine!.split(" ")[1]), headers, body: bytes.subarray(end + 4).toString("utf8") };
}

/**
 * Sends each PATCH on a connection of its own, writing them all in one
 * synchronous loop once the server has accepted every connection: the server
 * (in this process) then reads every body in the same turn of its event loop,
 * so the PATCHes share one group commit, in the order given.
 */
async function together(served: Served, key: string, sent: readonly Sent[]): Promise<Answer[]> {
  const { hostname, port } = new URL(served.url);
  const accepted = new Set<number>();
  const onConnection = (socket: Socket) => accepted.add(socket.remotePort!);
  served.running.server.on("connection", onConnection);
  const sockets = await Promise.all(
    sent.map(
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(port), hostname, () => resolve(socket));
          socket.once("error", reject);
        }),
    ),
  );
  expect(await pollUntil(async () => sockets.every((socket) => accepted.has(socket.localPort!)), 30_000)).toBe(true);
  served.running.server.off("connection", onConnection);

  const answers = sockets.map(
    (socket) =>
      new Promise<Answer>((resolve, reject) => {
        const parts: Buffer[] = [];
        socket.on("data", (chunk: Buffer) => parts.push(chunk));
        socket.on("end", () => resolve(parseAnswer(Buffer.concat(parts))));
        socket.on("error", reject);
      }),
  );
  sockets.forEach((socket, i) => socket.write(requestText(served.url, key, sent[i]!)));
  return Promise.all(answers);
}

/** The ETag the server gives the organization file holding `org`. */
const etagOfState = (org: Organization) => `"${sha256Hex(canonicalJson(org))}"`;

async function organizationOf(url: string, orgId: string, key: string): Promise<Organization> {
  const res = await call(url, api(orgId, "organization"), { key });
  expect(res.status).toBe(200);
  return (await res.json()) as Organization;
}

describe("PATCHes that arrive together (group commit)", () => {
  const description = (value: string, headers?: Record<string, string>): Sent => ({
    path: DESCRIPTION,
    body: { businessDescription: value },
    headers,
  });

  it("to two organizations: each is answered with the ETag of the state its own write produced, and each file ends as the last committed row", async () => {
    site = await startSite({ writeRate: 100_000, authRefreshMs: 20 });
    const url = site.url;
    const harborWrite = withDb(site.db, (db) => createKey(db, { orgId: "harbor", scopes: ["read", "write"] }).rawKey);
    expect(await pollUntil(async () => (await call(url, api("harbor", "organization"), { key: harborWrite })).status === 200, 30_000)).toBe(true);
    const writers = [
      { orgId: "demo", key: DEMO_WRITE_KEY, before: await organizationOf(url, "demo", DEMO_READ_KEY) },
      { orgId: "harbor", key: harborWrite, before: await organizationOf(url, "harbor", HARBOR_READ_KEY) },
    ];

    await Promise.all(
      writers.map(async ({ orgId, key, before }) => {
        const values = Array.from({ length: 20 }, (_, i) => `Description ${i} of ${orgId}.`);
        const sent = values.map((value) => ({ path: api(orgId, "business-description"), body: { businessDescription: value } }));
        const answers = await together(site!, key, sent);

        // Only the description changes, so the state each write produced is known. The
        // batch's last state in its place would let a stale If-Match through.
        answers.forEach((answer, i) => {
          expect(answer.status, answer.body).toBe(200);
          expect(answer.headers.etag, values[i]).toBe(etagOfState({ ...before, businessDescription: values[i]! }));
        });
        const stored = storedBusiness(site!.db, orgId).businessDescription;
        expect(stored).toBe(values.at(-1));
        const file = await organizationFile(site!, orgId);
        expect(JSON.parse(file.toString("utf8"))).toEqual({ ...before, businessDescription: stored });
        expect(answers.at(-1)!.headers.etag).toBe(`"${sha256Hex(file)}"`);
      }),
    );
  });

  it("with the same If-Match: the first is stored, the others answer 412 and change nothing", async () => {
    site = await startSite({ writeRate: 100_000 });
    const before = await organizationOf(site.url, "demo", DEMO_READ_KEY);
    const ifMatch = { "if-match": etagOfState(before) };

    const answers = await together(
      site,
      DEMO_WRITE_KEY,
      Array.from({ length: 16 }, (_, i) => description(`Guarded write ${i}.`, ifMatch)),
    );

    expect(answers[0]!.status).toBe(200);
    for (const answer of answers.slice(1)) {
      expect(answer.status).toBe(412);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "precondition_failed" } });
    }
    expect(storedBusiness(site.db, "demo")).toEqual({ businessDescription: "Guarded write 0.", businessOffers: before.businessOffers });
    const file = await organizationFile(site, "demo");
    expect(JSON.parse(file.toString("utf8"))).toEqual({ ...before, businessDescription: "Guarded write 0." });
    expect(answers[0]!.headers.etag).toBe(`"${sha256Hex(file)}"`);
  });

  it("an answered ETag sent back as If-Match passes only if no later write changed the organization", async () => {
    site = await startSite({ writeRate: 100_000 });
    const answers = await together(
      site,
      DEMO_WRITE_KEY,
      Array.from({ length: 12 }, (_, i) => description(`Write ${i} of a dozen.`)),
    );
    const etags = answers.map((answer) => answer.headers.etag!);
    expect(new Set(etags).size).toBe(12);

    for (const etag of etags.slice(0, -1)) {
      const res = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Lost update." }, { "if-match": etag });
      await expectError(res, 412, "precondition_failed");
    }
    const res = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Up to date." }, { "if-match": etags.at(-1)! });
    expect(res.status).toBe(200);
    expect(storedBusiness(site.db, "demo").businessDescription).toBe("Up to date.");
  });

  it("a PATCH refused with 412 leaves the others of its batch stored, in order", async () => {
    site = await startSite({ writeRate: 100_000 });
    const stale = { "if-match": (await call(site.url, ORG, { key: DEMO_READ_KEY })).headers.get("etag")! };
    const first = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Makes the first ETag stale." });
    expect(first.status).toBe(200);

    const sent: Sent[] = [
      { path: OFFERS, body: { businessOffers: offersOf(1) } },
      description("Stored second."),
      { path: OFFERS, body: { businessOffers: offersOf(3) }, headers: stale },
      description("Refused fourth.", stale),
    ];
    const answers = await together(site, DEMO_WRITE_KEY, sent);

    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 412, 412]);
    const stored = storedBusiness(site.db, "demo");
    expect(stored).toEqual({ businessDescription: "Stored second.", businessOffers: offersOf(1) });
    const file = await organizationFile(site, "demo");
    const org = JSON.parse(file.toString("utf8")) as Organization;
    expect({ businessDescription: org.businessDescription, businessOffers: org.businessOffers }).toEqual(stored);
    expect(answers[1]!.headers.etag).toBe(`"${sha256Hex(file)}"`);
  });

  it("a write that fails halfway is answered 500 and undone whole, the others of its batch stored", async () => {
    site = await startSite({ writeRate: 100_000 });
    const before = storedBusiness(site.db, "demo");
    // The offers write deletes the list, then inserts: the second insert fails.
    withDb(site.db, (db) =>
      db.exec(`CREATE TRIGGER refuse_one BEFORE INSERT ON business_offers
        WHEN NEW.name = 'Refused by a trigger' BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END`),
    );

    const answers = await together(site, DEMO_WRITE_KEY, [
      description("Stored first."),
      { path: OFFERS, body: { businessOffers: [offersOf(2)[0], { name: "Refused by a trigger", description: "Never stored." }] } },
      description("Stored third."),
    ]);

    expect(answers.map((answer) => answer.status)).toEqual([200, 500, 200]);
    expect(JSON.parse(answers[1]!.body)).toMatchObject({ error: { code: "internal" } });
    const stored = storedBusiness(site.db, "demo");
    expect(stored).toEqual({ businessDescription: "Stored third.", businessOffers: before.businessOffers });
    const org = JSON.parse((await organizationFile(site, "demo")).toString("utf8")) as Organization;
    expect({ businessDescription: org.businessDescription, businessOffers: org.businessOffers }).toEqual(stored);
  });

  it("a write that rolls back the whole transaction fails every PATCH of its batch, and none is stored", async () => {
    site = await startSite({ writeRate: 100_000 });
    withDb(site.db, (db) =>
      db.exec(`CREATE TRIGGER roll_back_all BEFORE UPDATE OF business_description ON organizations
        WHEN NEW.business_description = 'Rolls everything back.' BEGIN SELECT RAISE(ROLLBACK, 'rolled back by a trigger'); END`),
    );
    const rows = dumpBusinessTables(site.db);
    const file = await organizationFile(site, "demo");

    const answers = await together(site, DEMO_WRITE_KEY, [
      description("Before the rollback."),
      description("Rolls everything back."),
      description("After the rollback."),
    ]);

    expect(answers.map((answer) => answer.status)).toEqual([500, 500, 500]);
    expect(dumpBusinessTables(site.db)).toBe(rows);
    expect(await organizationFile(site, "demo")).toEqual(file);
  });
});
