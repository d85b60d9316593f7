/** The one mapping from API path to file: round trips, reserved words, no collisions. */
import { describe, expect, test } from "vitest";
import { fileOf, orgFolderOf, orgInFolder, parseApiPath, partOfFile, partRanges, pathOf, routeOfFile, type Route } from "../src/api-paths.js";
import { ROUTES } from "../src/route-table.js";

const ORG = "demo";

/** GET routes over the ids and slugs most likely to collide. */
function trickyRoutes(): Route[] {
  const ids = ["references", "p1", "P1", "a_b-c", "0"];
  const slugs = ["by-slug", "references", "p1", "a-b-c"];
  const routes: Route[] = [
    { kind: "blocks", orgId: ORG },
    { kind: "organization", orgId: ORG },
    { kind: "contents", orgId: ORG },
    { kind: "categories", orgId: ORG },
  ];
  for (const id of ids) {
    routes.push({ kind: "block", orgId: ORG, id }, { kind: "content", orgId: ORG, id }, { kind: "references", orgId: ORG, id });
  }
  for (const slug of slugs) routes.push({ kind: "blockBySlug", orgId: ORG, slug }, { kind: "contentBySlug", orgId: ORG, slug });
  return routes;
}

describe("api paths", () => {
  test("each GET route has the documented path and a file that is the path plus .json", () => {
    expect(pathOf({ kind: "blocks", orgId: ORG })).toBe("/api/organizations/demo/blocks");
    expect(pathOf({ kind: "blockBySlug", orgId: ORG, slug: "hero" })).toBe("/api/organizations/demo/blocks/by-slug/hero");
    expect(pathOf({ kind: "references", orgId: ORG, id: "p1" })).toBe("/api/organizations/demo/contents/p1/references");
    expect(pathOf({ kind: "businessOffers", orgId: ORG })).toBe("/api/organizations/demo/business-offers");
    for (const route of trickyRoutes()) expect(fileOf(route)).toBe(`${pathOf(route).slice(1)}.json`);
  });

  test("parseApiPath, fileOf and routeOfFile round-trip every route", () => {
    for (const route of trickyRoutes()) {
      expect(parseApiPath(pathOf(route))).toEqual(route);
      expect(routeOfFile(fileOf(route))).toEqual(route);
    }
  });

  test("every file of an organization lies in its folder, and the folder names the organization", () => {
    for (const orgId of [ORG, "a", "acme-2", "org_9"]) {
      for (const route of trickyRoutes()) {
        const file = fileOf({ ...route, orgId });
        expect(file.startsWith(orgFolderOf(orgId))).toBe(true);
        expect(orgInFolder(file)).toBe(orgId);
      }
    }
    // A folder is never the prefix of another organization's.
    expect(fileOf({ kind: "blocks", orgId: "ab" }).startsWith(orgFolderOf("a"))).toBe(false);
  });

  test("a post's files and the contents list are the posts part of an organization's tree, every other file the rows part", () => {
    for (const orgId of [ORG, "contents", "contents-2"]) {
      for (const route of trickyRoutes()) {
        const file = fileOf({ ...route, orgId });
        const part = ROUTES[route.kind].entity === "post" ? "posts" : "rows";
        expect(partOfFile(file), file).toBe(part);
        // The key ranges the build state reads a part by hold exactly that part's files, and the organization's range all of them.
        const inRanges = (ranges: [string, string][]) => ranges.some(([from, to]) => file >= from && file < to);
        expect(inRanges(partRanges(orgId, part)), file).toBe(true);
        expect(inRanges(partRanges(orgId, part === "posts" ? "rows" : "posts")), file).toBe(false);
        expect(inRanges(partRanges(orgId)), file).toBe(true);
        for (const other of ["content", "contents", "contents-2", `${orgId}0`].filter((id) => id !== orgId)) expect(inRanges(partRanges(other)), `${file} in ${other}`).toBe(false);
      }
    }
  });

  test("ids `references` and slugs `by-slug` and `references` land on distinct files", () => {
    const routes = trickyRoutes();
    const files = routes.map(fileOf);
    expect(new Set(files).size).toBe(routes.length);
    // No file is also a folder another file lives in (`x.json` vs `x/…` can both exist; `x` vs `x/` cannot).
    for (const f of files) {
      const asFolder = `${f.slice(0, -".json".length)}.json/`;
      expect(files.some((other) => other.startsWith(asFolder))).toBe(false);
    }
  });

  test("the reserved id by-slug is no block or content", () => {
    expect(parseApiPath("/api/organizations/demo/blocks/by-slug")).toBeNull();
    expect(parseApiPath("/api/organizations/demo/contents/by-slug")).toBeNull();
    expect(parseApiPath("/api/organizations/demo/contents/by-slug/references")).toEqual({
      kind: "contentBySlug",
      orgId: ORG,
      slug: "references",
    });
  });

  test("paths outside the interface, traversal tricks and illegal segments match nothing", () => {
    for (const p of [
      "/api/organizations/demo",
      "/api/organizations/demo/",
      "/api/organizations/demo/blocks/",
      "/api/organizations/demo/unknown",
      "/api/organizations/demo/blocks/a/b",
      "/api/organizations/demo/contents/p1/other",
      "/api/organizations/demo/contents/p1/references/x",
      "/api/organizations/demo/blocks/by-slug/Hero",
      "/api/organizations/demo/blocks/by-slug/a--b",
      "/api/organizations/demo/blocks/%2e%2e",
      "/api/organizations/demo/blocks/..",
      "/api/organizations/demo/contents/a.b",
      "/api/organizations/../blocks",
      "/api/organizations/-demo/blocks",
      "/api/organizations//blocks",
      "/api/organizations/de%6Do/blocks",
      "/other/demo/blocks",
    ]) {
      expect(parseApiPath(p), p).toBeNull();
    }
  });

  test("the two PATCH routes parse but have no file", () => {
    expect(parseApiPath("/api/organizations/demo/business-description")).toEqual({ kind: "businessDescription", orgId: ORG });
    expect(() => fileOf({ kind: "businessDescription", orgId: ORG })).toThrow();
    expect(() => fileOf({ kind: "businessOffers", orgId: ORG })).toThrow();
    expect(routeOfFile("api/organizations/demo/business-offers.json")).toBeNull();
  });

  test("a stray file answers no route", () => {
    expect(routeOfFile("api/organizations/demo/blocks")).toBeNull();
    expect(routeOfFile("api/organizations/demo/blocks.json.tmp")).toBeNull();
    expect(routeOfFile("api/organizations/demo/.blocks.json.1a2b.tmp")).toBeNull();
    expect(routeOfFile("manifest.json")).toBeNull();
  });
});
