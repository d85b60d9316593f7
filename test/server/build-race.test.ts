/**
 * D14: a PATCH is never lost to a build. Once both have finished, the served
 * organization file reflects the latest committed PATCH, whichever order they
 * ran in, including the worst one: committed after the build read its
 * database snapshot and before it swapped in a tree rendered from that snapshot.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { DEMO_CONTENT } from "../fixtures/repo.js";
import { buildFixture } from "../fixtures/build-fixture.js";
import { storedBusiness, withDb } from "../fixtures/database.js";
import { organizationFile } from "../fixtures/tree.js";
import { runCli } from "../fixtures/cli.js";
import { type Served, startSite } from "../fixtures/served-site.js";
import { api, call, patchJson } from "../fixtures/http.js";

/**
 * The build reads the database snapshot, then the posts, then renders and swaps.
 * The real readPosts runs; only its return can be held back, so a test can land a
 * PATCH at the one moment that matters. Unarmed, the gate lets every build through.
 */
const gate = vi.hoisted(() => ({
  armed: false,
  reached: () => {},
  release: Promise.resolve(),
}));
vi.mock("../../src/sources/read-posts.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/sources/read-posts.js")>();
  return {
    ...actual,
    async readPosts(...args: Parameters<typeof actual.readPosts>) {
      const posts = await actual.readPosts(...args);
      if (gate.armed) {
        gate.armed = false;
        gate.reached();
        await gate.release;
      }
      return posts;
    },
  };
});

/** Arms the gate: `reached` resolves once a build holds its snapshot; `open()` lets it go on. */
function armGate(): { reached: Promise<void>; open: () => void } {
  let open = () => {};
  gate.release = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (gate.reached = resolve));
  gate.armed = true;
  return { reached, open };
}

type Site = Served & { stop(): Promise<void> };
let site: Site | undefined;
afterEach(async () => {
  gate.armed = false;
  await site?.stop();
  site = undefined;
});

const ORG = api("demo", "organization");
const DESCRIPTION = api("demo", "business-description");
const OFFERS = api("demo", "business-offers");

interface Organization {
  businessDescription: string;
  businessOffers: { name: string; description: string; link?: string }[];
}

async function served(url: string): Promise<Organization> {
  const res = await call(url, ORG, { key: DEMO_READ_KEY });
  expect(res.status).toBe(200);
  return (await res.json()) as Organization;
}

async function fileOnDisk(): Promise<Organization> {
  return JSON.parse((await organizationFile(site!, "demo")).toString("utf8")) as Organization;
}

describe("D14 a PATCH and a build", () => {
  it("a PATCH committed after the build read its snapshot, before its swap, survives the swap", async () => {
    site = await startSite({ writeRate: 100_000 });
    // A change for the build to publish: else it finds the organization unchanged and keeps the live tree.
    withDb(site.db, (db) => db.prepare("UPDATE categories SET value = value || ' (renamed)' WHERE org_id = 'demo'").run());
    const { reached, open } = armGate();
    const building = buildFixture(site);
    await reached;

    const offers = [{ name: "Landed mid-build", description: "Committed while the build was rendering." }];
    expect((await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Landed mid-build." })).status).toBe(200);
    expect((await patchJson(site.url, OFFERS, DEMO_WRITE_KEY, { businessOffers: offers })).status).toBe(200);
    expect((await served(site.url)).businessDescription).toBe("Landed mid-build.");

    open();
    const report = await building;
    // The build rendered the organization from its older snapshot, so it did swap in a new tree.
    expect(report.changed).toBe(true);

    const after = await served(site.url);
    expect(after.businessDescription).toBe("Landed mid-build.");
    expect(after.businessOffers).toEqual(offers);
    expect(await fileOnDisk()).toEqual(after);
  });

  it("a PATCH committed before the build and one after it are both kept", async () => {
    site = await startSite({ writeRate: 100_000 });
    expect((await patchJson(site.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Before the build." })).status).toBe(200);
    await buildFixture(site);
    expect((await served(site.url)).businessDescription).toBe("Before the build.");
    expect((await patchJson(site.url, OFFERS, DEMO_WRITE_KEY, { businessOffers: [] })).status).toBe(200);
    const after = await served(site.url);
    expect(after).toMatchObject({ businessDescription: "Before the build.", businessOffers: [] });
    expect(await fileOnDisk()).toEqual(after);
  });

  /** PATCHes one after another until `until` settles; returns the last description sent. */
  async function patchUntil(url: string, until: Promise<unknown>, tag: string): Promise<string> {
    let settled = false;
    void until.then(
      () => (settled = true),
      () => (settled = true),
    );
    let last = "";
    for (let n = 0; !settled || n === 0; n++) {
      last = `${tag} write ${n}`;
      const res = await patchJson(url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: last });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    return last;
  }

  it("PATCHes in a loop while library builds run end with the database's value served", async () => {
    site = await startSite({ writeRate: 100_000 });
    for (let round = 0; round < 3; round++) {
      const building = buildFixture(site);
      const last = await patchUntil(site.url, building, `round ${round}`);
      await building;
      expect(storedBusiness(site.db, "demo").businessDescription).toBe(last);
      expect((await served(site.url)).businessDescription).toBe(last);
      expect(await fileOnDisk()).toEqual(await served(site.url));
    }
  });

  it("PATCHes in a loop while a cdsnap build process runs end with the database's value served", async () => {
    site = await startSite({ writeRate: 100_000 });
    const building = runCli(["build", "--db", site.db, "--content", DEMO_CONTENT, "--out", site.out]);
    const last = await patchUntil(site.url, building, "process");
    const result = await building;
    expect(result.code, result.stderr).toBe(0);
    expect(storedBusiness(site.db, "demo").businessDescription).toBe(last);
    expect((await served(site.url)).businessDescription).toBe(last);
    expect(await fileOnDisk()).toEqual(await served(site.url));
  });
});
