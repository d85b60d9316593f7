/**
 * What the server tells the on-change hook: each group commit of PATCHes that
 * rewrote an organization file, a file repaired on start, and an organization
 * whose readers lost someone (a key revoked or deleted, its allowed origins
 * edited by another connection) -- and nothing for a PATCH that changed no byte
 * or was refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { createKey, revokeKey } from "../../src/db/keys.js";
import type { Change } from "../../src/on-change/change-set.js";
import { withDb } from "../fixtures/database.js";
import { api, call, patchJson } from "../fixtures/http.js";
import { makeSite, serveSite, type Served } from "../fixtures/served-site.js";
import { removeFixture } from "../fixtures/build-fixture.js";
import { pollUntil } from "../fixtures/wait.js";

const DESCRIPTION = api("demo", "business-description");
const DEMO_PATCH: Change = {
  event: "patch",
  paths: ["/api/organizations/demo/organization"],
  tags: ["organization:demo"],
  orgs: ["demo"],
};

let site: Served | undefined;
afterEach(async () => {
  await site?.close();
  await removeFixture(site);
  site = undefined;
});

async function serveRecording(refreshMs = 20): Promise<{ site: Served; changes: Change[] }> {
  const changes: Change[] = [];
  site = await serveSite(await makeSite(), { onChange: (change) => changes.push(change), authRefreshMs: refreshMs, writeRate: 10_000 });
  return { site, changes };
}

const describe200 = async (url: string, value: string) => {
  const res = await patchJson(url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: value });
  expect(res.status).toBe(200);
};

describe("the server tells of PATCHes", () => {
  it("a PATCH that rewrote the organization file: its path and tag, before the answer arrives", async () => {
    const { site, changes } = await serveRecording();
    await describe200(site.url, "Roasted this morning.");
    expect(changes).toEqual([DEMO_PATCH]);
  });

  it("PATCHes committed together are one change; one that stores the same value, or is refused, is none", async () => {
    const { site, changes } = await serveRecording();
    const values = ["one", "two", "three"];
    const answers = await Promise.all(values.map((v) => patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: v })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    // However the three fell into group commits, each group that wrote the file is one change of the same org.
    expect(changes.length).toBeGreaterThanOrEqual(1);
    expect(changes.length).toBeLessThanOrEqual(3);
    for (const change of changes) expect(change).toEqual(DEMO_PATCH);
    changes.length = 0;

    const current = (await (await call(site.url, api("demo", "organization"), { key: DEMO_READ_KEY })).json()) as { businessDescription: string };
    await describe200(site.url, current.businessDescription);
    const stale = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "x" }, { "If-Match": '"stale"' });
    expect(stale.status).toBe(412);
    const invalid = await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: 42 });
    expect(invalid.status).toBe(422);
    expect(changes).toEqual([]);
  });

  it("an organization file repaired on start (a row changed while no server ran) is a change", async () => {
    const made = await makeSite();
    withDb(made.db, (db) => db.prepare("UPDATE organizations SET business_description = 'Changed offline' WHERE id = 'demo'").run());
    const changes: Change[] = [];
    site = await serveSite(made, { onChange: (change) => changes.push(change) });
    expect(changes).toEqual([DEMO_PATCH]);
  });
});

describe("the server tells of readers lost, without waiting for a request", () => {
  it("a key revoked by another connection: every cached answer of its organization", async () => {
    const { site, changes } = await serveRecording();
    withDb(site.db, (db) => revokeKey(db, "demo-read"));
    expect(await pollUntil(async () => changes.length > 0, 10_000)).toBe(true);
    expect(changes).toEqual([{ event: "access", paths: [], tags: ["org:demo"], orgs: ["demo"] }]);
  });

  it("a key deleted, or an organization's allowed origins edited: that organization", async () => {
    const { site, changes } = await serveRecording();
    withDb(site.db, (db) => db.prepare("DELETE FROM api_keys WHERE id = 'harbor-read'").run());
    expect(await pollUntil(async () => changes.length > 0, 10_000)).toBe(true);
    withDb(site.db, (db) => db.prepare(`UPDATE organizations SET allowed_origins = '["https://shop.example"]' WHERE id = 'demo'`).run());
    expect(await pollUntil(async () => changes.length > 1, 10_000)).toBe(true);
    expect(changes.map((c) => [c.event, c.orgs])).toEqual([
      ["access", ["harbor"]],
      ["access", ["demo"]],
    ]);
  });

  it("a key created and revoked between two looks: its organization, though no look saw it valid", async () => {
    const { site, changes } = await serveRecording();
    withDb(site.db, (db) =>
      db.transaction(() => {
        const { record } = createKey(db, { orgId: "harbor", scopes: ["read"] });
        revokeKey(db, record.id);
      })(),
    );
    expect(await pollUntil(async () => changes.length > 0, 10_000)).toBe(true);
    expect(changes).toEqual([{ event: "access", paths: [], tags: ["org:harbor"], orgs: ["harbor"] }]);
  });

  it("a new key, or a write by the server itself, is no change of readers", async () => {
    const { site, changes } = await serveRecording();
    withDb(site.db, (db) => createKey(db, { orgId: "demo", scopes: ["read"] }));
    await describe200(site.url, "Still here.");
    // A revocation after them is noticed: the watch has looked at the database since.
    withDb(site.db, (db) => revokeKey(db, "harbor-read"));
    expect(await pollUntil(async () => changes.some((c) => c.event === "access"), 10_000)).toBe(true);
    expect(changes).toEqual([DEMO_PATCH, { event: "access", paths: [], tags: ["org:harbor"], orgs: ["harbor"] }]);
  });
});
