/**
 * The tree as a unit: same input, byte-identical tree; a rebuild rewrites only
 * what changed and swaps generations atomically; `--org` leaves the other
 * organizations exactly as they were.
 */
import { lstat, readFile, readdir, readlink, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { fileOf } from "../../src/api-paths.js";

const orgFolderOf = (orgId: string) => `api/organizations/${orgId}`;
import type { ContentList, Organization } from "../../src/model/api.js";
import { DEMO_NOW } from "../fixtures/repo.js";
import { buildFixture, fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { insertBlock, withDb } from "../fixtures/database.js";
import {
  type FileIdentity,
  hashTree,
  identitiesOf,
  listFiles,
  liveGenerationOf,
  readPages,
  readTreeJson,
  stateDirOf,
} from "../fixtures/tree.js";

const { fixture } = fixturesRemovedAfterEach();

const demoFixture = () => fixture({ demo: true });

/** Files whose inode, mtime or bytes differ between two snapshots of a tree. */
function changedFiles(before: Map<string, FileIdentity>, after: Map<string, FileIdentity>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names]
    .filter((n) => {
      const a = before.get(n);
      const b = after.get(n);
      return !a || !b || a.ino !== b.ino || a.mtimeMs !== b.mtimeMs || a.sha256 !== b.sha256;
    })
    .sort();
}

const demoFile = (route: Parameters<typeof fileOf>[0]) => fileOf(route);

describe("determinism", () => {
  test("the same input built twice, into two different --out folders, gives identical trees", async () => {
    const a = await demoFixture();
    const b = await demoFixture(); // its own database file and its own copy of the posts
    await buildFixture(a);
    await buildFixture(b);
    const second = path.join(a.dir, "elsewhere", "site");
    await buildFixture(a, { out: second });
    const hash = await hashTree(a.out);
    expect(await hashTree(b.out)).toBe(hash);
    expect(await hashTree(second)).toBe(hash);
    expect((await listFiles(a.out)).length).toBeGreaterThan(60);
  });

  test("the build instant leaves no trace: a later `now` that publishes nothing new gives the same bytes", async () => {
    const a = await demoFixture();
    const b = await demoFixture();
    await buildFixture(a, { now: DEMO_NOW });
    await buildFixture(b, { now: new Date(DEMO_NOW.getTime() + 24 * 3600 * 1000) });
    expect(await hashTree(b.out)).toBe(await hashTree(a.out));
  });

  test("every file is canonical JSON: object keys sorted, no whitespace", async () => {
    const fx = await demoFixture();
    await buildFixture(fx);
    const sortedKeys = (value: unknown): boolean => {
      if (Array.isArray(value)) return value.every(sortedKeys);
      if (value === null || typeof value !== "object") return true;
      const keys = Object.keys(value);
      const ordered = keys.every((k, i) => i === 0 || keys[i - 1]! < k);
      return ordered && Object.values(value).every(sortedKeys);
    };
    for (const rel of await listFiles(fx.out)) {
      const text = await readFile(path.join(fx.out, rel), "utf8");
      const json: unknown = JSON.parse(text);
      expect(sortedKeys(json), rel).toBe(true);
      expect(JSON.stringify(json), rel).toBe(text);
    }
  });
});

describe("atomic swap", () => {
  test("--out is a link to a complete generation, replaced by the next one", async () => {
    const fx = await demoFixture();
    await buildFixture(fx);
    expect((await lstat(fx.out)).isSymbolicLink()).toBe(true);
    const first = await readlink(fx.out);
    withDb(fx.db, (db) => db.prepare("UPDATE organizations SET name = 'Renamed' WHERE id = 'harbor'").run());
    const report = await buildFixture(fx);
    expect(report.changed).toBe(true);
    expect(await readlink(fx.out)).not.toBe(first);
    const org = await readTreeJson<Organization>(fx.out, demoFile({ kind: "organization", orgId: "harbor" }));
    expect(org.name).toBe("Renamed");
  });

  test("a rebuild with no change keeps the same generation and touches no file", async () => {
    const fx = await demoFixture();
    const first = await buildFixture(fx);
    const link = await readlink(fx.out);
    const before = await identitiesOf(fx.out);
    const stateBefore = await identitiesOf(stateDirOf(fx.out));

    const again = await buildFixture(fx);
    expect(again.changed).toBe(false);
    expect(again.generation).toBe(first.generation);
    expect(await readlink(fx.out)).toBe(link);
    expect(changedFiles(before, await identitiesOf(fx.out))).toEqual([]);
    expect(changedFiles(stateBefore, await identitiesOf(stateDirOf(fx.out)))).toEqual([]);
    const demo = again.orgs.find((o) => o.orgId === "demo");
    expect(demo).toMatchObject({ filesWritten: 0, filesRemoved: 0 });
    expect(demo?.filesUnchanged).toBe([...before.keys()].filter((f) => f.startsWith(orgFolderOf("demo"))).length);
  });

  test("an edit rewrites only the files it affects; every other file keeps its inode and mtime", async () => {
    const fx = await demoFixture();
    await buildFixture(fx);
    const before = await identitiesOf(fx.out);
    const post = path.join(fx.content, "demo/2026/notes-from-the-cupping-table.md");
    await writeFile(post, (await readFile(post, "utf8")).replace("title: Notes from the cupping table", "title: Cupping notes"));

    const report = await buildFixture(fx);
    expect(report.changed).toBe(true);
    // The post has no category: its files, the list and the list's page 1.
    expect(changedFiles(before, await identitiesOf(fx.out))).toEqual([
      demoFile({ kind: "contents", orgId: "demo" }),
      demoFile({ kind: "contentsPage", orgId: "demo", page: "1" }),
      demoFile({ kind: "content", orgId: "demo", id: "post-0012" }),
      demoFile({ kind: "contentBySlug", orgId: "demo", slug: "notes-from-the-cupping-table" }),
    ].sort());
    expect(report.orgs.find((o) => o.orgId === "demo")).toMatchObject({ filesWritten: 4, filesRemoved: 0 });
    expect(report.orgs.find((o) => o.orgId === "harbor")).toMatchObject({ filesWritten: 0, filesUnchanged: 11 });
  });

  test("a deleted post loses its files and leaves the list", async () => {
    const fx = await demoFixture();
    await buildFixture(fx);
    await rm(path.join(fx.content, "demo/archive/history-of-the-coffeehouse.md"));
    const report = await buildFixture(fx);
    const files = await listFiles(fx.out);
    expect(files).not.toContain(demoFile({ kind: "content", orgId: "demo", id: "post-0005" }));
    expect(files).not.toContain(demoFile({ kind: "references", orgId: "demo", id: "post-0005" }));
    expect(files).not.toContain(demoFile({ kind: "contentBySlug", orgId: "demo", slug: "a-short-history-of-the-coffeehouse" }));
    const list = await readTreeJson<ContentList>(fx.out, demoFile({ kind: "contents", orgId: "demo" }));
    expect(list.items.map((i) => i.id)).not.toContain("post-0005");
    // Written: the list and page 1 of it and of the post's category (news).
    expect(report.orgs.find((o) => o.orgId === "demo")).toMatchObject({ filesRemoved: 3, filesWritten: 3 });
  });

  test("only the live generation and the one before it are kept", async () => {
    const fx = await demoFixture();
    for (const name of ["One", "Two", "Three", "Four"]) {
      withDb(fx.db, (db) => db.prepare("UPDATE organizations SET name = ? WHERE id = 'harbor'").run(name));
      await buildFixture(fx);
    }
    const gens = await readdir(path.join(stateDirOf(fx.out), "gens"));
    expect(gens.sort()).toEqual(["000003", "000004"]);
    expect((await liveGenerationOf(fx.out)).id).toBe("000004");
  });

  test("an --out folder cdsnap did not make is refused and left as it was", async () => {
    const fx = await demoFixture();
    await writeFile(path.join(fx.dir, "keep.txt"), "mine");
    const out = fx.dir; // a non-empty folder of someone else's files
    await expect(buildFixture(fx, { out })).rejects.toThrow(/already exists and was not made by cdsnap/);
    expect(await readFile(path.join(fx.dir, "keep.txt"), "utf8")).toBe("mine");
  });
});

describe("--org rebuilds", () => {
  test("rebuilding one organization leaves the other's files byte-identical, same inode and mtime", async () => {
    const fx = await demoFixture();
    await buildFixture(fx);
    const before = await identitiesOf(fx.out);
    const demoPages = await readPages(await liveGenerationOf(fx.out), "demo");

    // Change both organizations; rebuild only harbor.
    withDb(fx.db, (db) => {
      db.prepare("UPDATE organizations SET name = 'Harbor Tea & Co' WHERE id = 'harbor'").run();
      db.prepare("UPDATE blocks SET name = 'Changed' WHERE org_id = 'demo' AND id = 'blk-hero'").run();
      insertBlock(db, "harbor", { id: "blk-new", slug: "new", pages: ["home"] });
    });
    const report = await buildFixture(fx, { orgs: ["harbor"] });
    expect(report.orgs.map((o) => o.orgId)).toEqual(["harbor"]);

    const after = await identitiesOf(fx.out);
    const changed = changedFiles(before, after);
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.every((f) => f.startsWith(`${orgFolderOf("harbor")}/`))).toBe(true);
    const harborOrg = await readTreeJson<Organization>(fx.out, demoFile({ kind: "organization", orgId: "harbor" }));
    expect(harborOrg.name).toBe("Harbor Tea & Co");
    const gen = await liveGenerationOf(fx.out);
    expect(await readPages(gen, "demo")).toEqual(demoPages);
    expect(await readPages(gen, "harbor")).toEqual({ home: ["blk-hero", "blk-new"], menu: ["blk-tea-menu"] });
  });

  test("--org reads only that organization's folder", async () => {
    const fx = await demoFixture();
    await buildFixture(fx);
    await writeFile(path.join(fx.content, "demo", "broken.md"), "no front matter");
    await expect(buildFixture(fx, { orgs: ["harbor"] })).resolves.toMatchObject({ orgs: [{ orgId: "harbor" }] });
    await expect(buildFixture(fx)).rejects.toThrow(/problem/);
  });

  test("an unknown --org id is a build error and writes nothing", async () => {
    const fx = await demoFixture();
    await buildFixture(fx);
    const before = await hashTree(fx.out);
    await expect(buildFixture(fx, { orgs: ["nope"] })).rejects.toMatchObject({
      problems: [{ where: "--org nope", message: expect.stringMatching(/no organization/) }],
    });
    expect(await hashTree(fx.out)).toBe(before);
  });
});
