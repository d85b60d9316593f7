/**
 * D10: never a directory listing, never a file outside the API tree. Canary
 * files are planted beside the tree, in the state folder and beside the live
 * generation; no request path, however spelled, may bring one back.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_SECRET_VALUES } from "../../src/db/demo-seed.js";
import { liveGenerationSync, treeStoreOf } from "../../src/emit/tree-store.js";
import { type Served, startSite } from "../fixtures/served-site.js";
import { api, expectError, rawRequest } from "../fixtures/http.js";

type Site = Served & { stop(): Promise<void> };
let site: Site;
let gen: string;

const CANARY = "CANARY-f4c1b2a9-outside-the-tree";

beforeAll(async () => {
  site = await startSite();
  const live = liveGenerationSync(treeStoreOf(site.out));
  if (!live) throw new Error("the site has no live generation");
  gen = live.id;
  const body = JSON.stringify({ canary: CANARY });
  // Beside the tree (the folder holding --out and the database).
  await writeFile(path.join(site.dir, "canary.json"), body);
  await writeFile(path.join(site.dir, "canary"), body);
  // In the state folder, its generations folder, and beside the live tree.
  await writeFile(path.join(site.stateDir, "canary.json"), body);
  await writeFile(path.join(site.stateDir, "gens", "canary.json"), body);
  await writeFile(path.join(live.dir, "canary.json"), body);
  // Links planted inside the live tree, where a route's file would be.
  const contents = path.join(live.tree, "api", "organizations", "demo", "contents");
  await symlink(path.join(site.dir, "canary.json"), path.join(contents, "evil.json"));
  await symlink(path.join(site.dir, "canary.json"), path.join(contents, "by-slug", "evil-slug.json"));
  await mkdir(path.join(live.tree, "api", "organizations", "demo", "blocks", "folder.json"));
});
afterAll(() => site?.stop());

const HOSTILE = [
  // dot-dot, plain
  "/../canary.json",
  "/api/../../canary.json",
  "/api/organizations/demo/../../../canary.json",
  "/api/organizations/demo/blocks/../../../../canary",
  "/api/organizations/demo/blocks/../../../../../canary.json",
  // dot-dot, percent-encoded, either case
  "/api/organizations/demo/%2e%2e/%2e%2e/%2e%2e/canary.json",
  "/api/organizations/demo/%2E%2E/%2E%2E/%2E%2E/canary",
  "/api/organizations/demo/blocks/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/canary.json",
  // encoded slashes
  "/api/organizations/demo%2f..%2f..%2f..%2fcanary",
  "/api/organizations/demo/blocks/..%2f..%2f..%2f..%2f..%2fcanary",
  "/api/organizations/demo/blocks/by-slug/..%2F..%2F..%2F..%2F..%2F..%2Fcanary",
  "/api/organizations/demo/contents/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fcanary",
  "/%2e%2e%2fcanary.json",
  // backslashes
  "/api/organizations/demo/..\\..\\..\\canary.json",
  "/api/organizations/demo/blocks/..\\..\\..\\..\\..\\canary",
  "/api/organizations/demo/blocks/..%5c..%5c..%5c..%5c..%5ccanary",
  // the database file
  "/db.sqlite",
  "/api/organizations/demo/db.sqlite",
  "/api/organizations/demo/blocks/db.sqlite",
  "/api/organizations/demo/../../../db.sqlite",
  "/api/organizations/demo/blocks/..%2f..%2f..%2f..%2f..%2fdb.sqlite",
  // the state folder, its build state and pages files
  "/.site.cdsnap/canary.json",
  "/.site.cdsnap/state.sqlite",
  "/state.sqlite",
  "/api/organizations/demo/state.sqlite",
  "/api/organizations/demo/blocks/..%2f..%2f..%2f..%2f..%2f.site.cdsnap%2fstate.sqlite",
  "/api/organizations/demo/.site.cdsnap/canary.json",
  "/api/organizations/demo/blocks/..%2f..%2f..%2f..%2f..%2f.site.cdsnap%2fcanary.json",
  "/pages/demo.json",
  "/api/organizations/demo/pages",
  "/api/organizations/demo/pages/demo",
  "/api/organizations/demo/blocks/../../../../../pages/demo.json",
  // the tree's own file names, and folders
  "/api/organizations/demo/organization.json",
  "/api/organizations/demo/blocks.json",
  "/api/organizations/demo/blocks/blk-hero.json",
  "/api/organizations/demo/blocks/by-slug",
  "/api/organizations/demo/blocks/folder",
  "/api/organizations/demo/contents/by-slug/",
  "/api/organizations/demo/./organization",
  "/api/organizations//demo/organization",
  // NUL bytes and absolute-form targets
  "/api/organizations/demo/blocks/blk-hero%00.json",
  "/api/organizations/demo/organization%00",
  "http://localhost/api/organizations/demo/../../../canary.json",
  // links planted inside the tree are never followed
  "/api/organizations/demo/contents/evil",
  "/api/organizations/demo/contents/by-slug/evil-slug",
];

describe("hostile paths", () => {
  it.each(HOSTILE)("%s answers 404 and nothing from outside the tree", async (target) => {
    const res = await rawRequest(site.url, { path: target, headers: { "x-api-key": DEMO_READ_KEY } });
    await expectError(res, 404, "not_found");
    expect(res.text).not.toContain(CANARY);
    expect(res.text).not.toContain("SQLite format");
    for (const secret of DEMO_SECRET_VALUES) expect(res.text).not.toContain(secret);
  });

  it("the same paths answer HEAD with 404 too", async () => {
    for (const target of HOSTILE) {
      const res = await rawRequest(site.url, { method: "HEAD", path: target, headers: { "x-api-key": DEMO_READ_KEY } });
      expect(res.status, target).toBe(404);
      expect(res.body.length).toBe(0);
    }
  });

  it("the client used above does send paths verbatim: the real files answer", async () => {
    const ok = await rawRequest(site.url, { path: api("demo", "organization"), headers: { "x-api-key": DEMO_READ_KEY } });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({ id: "demo" });
    // The generation the canaries sit beside is the one being served.
    expect(gen).toMatch(/^\d{6}$/);
  });
});
