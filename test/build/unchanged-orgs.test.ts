/**
 * An organization whose inputs are all as its last build left them (its rows,
 * its posts' files and bytes, the code, and no scheduled post due) is kept as
 * it is: a build neither parses its posts nor plans it, and still reports it
 * and its warnings. Whatever changes, the tree is the one a clean build makes.
 */
import { cp, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { refreshOrganizationFiles } from "../../src/emit/organization-file.js";
import { treeStoreOf } from "../../src/emit/tree-store.js";
import type { BuildReport } from "../../src/report.js";
import { buildFixture, buildProblems, makeFixture, removeDir, type Fixture } from "../fixtures/build-fixture.js";
import { insertBlock, insertCategory, insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree, pathExists } from "../fixtures/tree.js";

const { planned, parts, read, records, blockRenders } = vi.hoisted(() => ({
  planned: [] as string[],
  /** The parts of each planned organization that were rendered. */
  parts: [] as string[],
  read: [] as string[],
  /** Whole post records read back from the build state (an unchanged post is planned from its head). */
  records: [] as string[],
  blockRenders: { count: 0 },
}));

vi.mock("../../src/emit/build-state.js", async (importOriginal) => {
  const { reportingRecordReads } = await import("../fixtures/state-reads.js");
  return reportingRecordReads(await importOriginal(), (file) => records.push(file));
});

vi.mock("../../src/render/blocks.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/render/blocks.js")>();
  return {
    ...actual,
    renderBlocks: (...args: Parameters<typeof actual.renderBlocks>) => {
      blockRenders.count++;
      return actual.renderBlocks(...args);
    },
  };
});

vi.mock("../../src/render/render-org.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/render/render-org.js")>();
  return {
    ...actual,
    planOrg: (...args: Parameters<typeof actual.planOrg>) => {
      planned.push(args[0].id);
      const plan = actual.planOrg(...args);
      if (!plan.kept.rows) parts.push(`${plan.orgId} rows`);
      if (!plan.kept.posts) parts.push(`${plan.orgId} posts`);
      return plan;
    },
  };
});

vi.mock("../../src/sources/read-text.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/sources/read-text.js")>();
  return {
    ...actual,
    readText: (...args: Parameters<typeof actual.readText>) => {
      read.push(args[2]);
      return actual.readText(...args);
    },
    readIdentities: (...args: Parameters<typeof actual.readIdentities>) => {
      read.push(...args[2]);
      return actual.readIdentities(...args);
    },
  };
});

const ORGS = ["alpha", "beta", "gamma", "delta"];

function seedOrg(fx: Fixture, orgId: string): Promise<unknown> {
  withDb(fx.db, (db) => {
    insertOrg(db, { id: orgId, name: `Org ${orgId}`, slug: orgId });
    insertCategory(db, orgId, { id: "c1", slug: "news", value: "News" });
    insertBlock(db, orgId, { id: "hero", slug: "hero", fields: [{ key: "title", type: "text", value: `Hello ${orgId}` }], pages: ["home"] });
    insertBlock(db, orgId, { id: "teaser", slug: "teaser", status: "draft", fields: [{ key: "title", type: "text", value: "Soon" }] });
  });
  return Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      writePost(fx.content, `${orgId}/p${i}.md`, postMeta(`${orgId}-p${i}`, { category: i % 2 ? "news" : undefined }), `Body ${i} of ${orgId}.\n`),
    ),
  );
}

/** Builds, and returns the report with the organizations the build planned. */
async function buildPlanning(fx: Fixture, options: Parameters<typeof buildFixture>[1] = {}) {
  planned.length = 0;
  parts.length = 0;
  read.length = 0;
  records.length = 0;
  blockRenders.count = 0;
  const report: BuildReport = await buildFixture(fx, options);
  return {
    report,
    planned: [...planned].sort(),
    parts: [...parts].sort(),
    read: [...new Set(read)].sort(),
    records: [...records].sort(),
    blockRenders: blockRenders.count,
  };
}

async function expectCleanTree(fx: Fixture, name: string, options: Parameters<typeof buildFixture>[1] = {}): Promise<void> {
  const clean = path.join(fx.dir, name);
  await buildFixture(fx, { ...options, out: clean });
  expect(await hashTree(fx.out)).toBe(await hashTree(clean));
}

// Every test starts from the four organizations, seeded anew.
let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
  for (const orgId of ORGS) await seedOrg(fx, orgId);
});
afterEach(async () => removeDir(fx.dir));

describe("organizations whose inputs did not change", () => {
  it("are neither parsed nor planned again, and are reported as the build that made them did", async () => {
    const full = await buildPlanning(fx);
    expect(full.planned).toEqual([...ORGS].sort());

    const noOp = await buildPlanning(fx);
    expect(noOp.planned).toEqual([]);
    expect(noOp.report).toMatchObject({ changed: false, generation: full.report.generation, postsParsed: 0, postsReused: 20, postsRendered: 0 });
    expect(noOp.report.orgs).toEqual(
      full.report.orgs.map((org) => ({ ...org, filesWritten: 0, filesUnchanged: org.filesWritten + org.filesUnchanged, filesRemoved: 0 })),
    );

    await writePost(fx.content, "beta/p2.md", postMeta("beta-p2", { title: "Edited" }), "Edited body.\n");
    const edit = await buildPlanning(fx);
    expect(edit.planned).toEqual(["beta"]);
    expect(edit.report).toMatchObject({ changed: true, postsParsed: 1, postsRendered: 1 });
    expect(edit.report.orgs.filter((org) => org.filesWritten > 0).map((org) => org.orgId)).toEqual(["beta"]);
    await expectCleanTree(fx, "clean-edit");
  });

  it("a row change that alters no file is planned once, then the organization is unchanged again", async () => {
    await buildFixture(fx);
    withDb(fx.db, (db) => db.prepare("UPDATE block_fields SET value = ? WHERE org_id = 'gamma' AND block_id = 'teaser'").run(JSON.stringify("Later")));
    const draftEdited = await buildPlanning(fx);
    expect(draftEdited.planned).toEqual(["gamma"]);
    expect(draftEdited.report.changed).toBe(false);
    expect((await buildPlanning(fx)).planned).toEqual([]);

    await writePost(fx.content, "delta/draft.md", postMeta("delta-draft", { status: "draft" }));
    expect((await buildPlanning(fx)).planned).toEqual(["delta"]);
    expect((await buildPlanning(fx)).planned).toEqual([]);
  });

  it("an organization's rows are validated again as soon as one changes, however it changes", async () => {
    await buildFixture(fx);
    withDb(fx.db, (db) => db.prepare("UPDATE block_fields SET value = 'not json' WHERE org_id = 'beta' AND block_id = 'teaser'").run());
    const problems = await buildProblems(fx);
    expect(problems).toEqual([{ where: "block_fields[org_id=beta block_id=teaser position=0]", message: expect.stringMatching(/^value: is not valid JSON/) }]);
    withDb(fx.db, (db) => db.prepare("UPDATE block_fields SET value = '\"Soon\"' WHERE org_id = 'beta' AND block_id = 'teaser'").run());
    // The rows are as the live tree's build validated them again: nothing to plan.
    expect((await buildPlanning(fx)).planned).toEqual([]);
  });

  it("a fresh checkout (same bytes in new files) plans nothing, and the next build does not read the posts again", async () => {
    await buildFixture(fx);
    const copy = `${fx.content}.checkout`;
    await cp(fx.content, copy, { recursive: true });
    await rm(fx.content, { recursive: true });
    await rename(copy, fx.content);
    const checkout = await buildPlanning(fx);
    expect(checkout.planned).toEqual([]);
    expect(checkout.report).toMatchObject({ changed: false, postsParsed: 0, postsReused: 20 });
    expect(checkout.read).toHaveLength(20);
    // The new files' identities were recorded: the next build reads only the post edited since.
    await writePost(fx.content, "alpha/p0.md", postMeta("alpha-p0", { title: "After checkout" }));
    const edit = await buildPlanning(fx);
    expect(edit.planned).toEqual(["alpha"]);
    expect(edit.report).toMatchObject({ postsParsed: 1, postsReused: 19 });
    expect(edit.read).toEqual(["alpha/p0.md"]);
    await expectCleanTree(fx, "clean-checkout");
  });

  it("an organization gone from the database loses its files; one added is planned alone", async () => {
    await buildFixture(fx);
    withDb(fx.db, (db) => {
      for (const table of ["block_pages", "block_fields", "blocks", "categories"]) db.prepare(`DELETE FROM ${table} WHERE org_id = 'delta'`).run();
      db.prepare("DELETE FROM organizations WHERE id = 'delta'").run();
    });
    await rm(path.join(fx.content, "delta"), { recursive: true });
    const dropped = await buildPlanning(fx);
    expect(dropped.planned).toEqual([]);
    expect(dropped.report.changed).toBe(true);
    expect(dropped.report.changedPaths.removed).toContain("/api/organizations/delta/contents");
    expect(await pathExists(path.join(fx.out, "api/organizations/delta"))).toBe(false);
    await expectCleanTree(fx, "clean-dropped");

    await seedOrg(fx, "epsilon");
    const added = await buildPlanning(fx);
    expect(added.planned).toEqual(["epsilon"]);
    expect(added.report.orgs.map((org) => org.orgId).sort()).toEqual(["alpha", "beta", "epsilon", "gamma"]);
    await expectCleanTree(fx, "clean-added");
    expect((await buildPlanning(fx)).planned).toEqual([]);
  });

  it("a PATCH that replaces a kept organization's file while the build writes survives the swap (D14)", async () => {
    await buildFixture(fx);
    withDb(fx.db, (db) => db.prepare("UPDATE organizations SET name = 'Alpha, renamed' WHERE id = 'alpha'").run());
    // A post to render, so that onProgress is called.
    await writePost(fx.content, "alpha/p3.md", postMeta("alpha-p3", { title: "Edited meanwhile" }));
    let landed = false;
    // Called once the next generation holds its copy of the live tree: the write proxy commits and replaces beta's file now.
    const onProgress = () => {
      if (landed) return;
      landed = true;
      withDb(fx.db, (db) => {
        db.prepare("UPDATE organizations SET business_description = 'Landed mid-build' WHERE id = 'beta'").run();
        refreshOrganizationFiles(db, treeStoreOf(fx.out), ["beta"]);
      });
    };
    const built = await buildPlanning(fx, { onProgress });
    expect(landed).toBe(true);
    expect(built.planned).toEqual(["alpha"]);
    expect(built.report.changedPaths.changed).toContain("/api/organizations/beta/organization");
    const beta = JSON.parse(await readFile(path.join(fx.out, "api/organizations/beta/organization.json"), "utf8")) as { businessDescription: string };
    expect(beta.businessDescription).toBe("Landed mid-build");
    await expectCleanTree(fx, "clean-patched");
  });

  it("an --org build after a PATCH replaced another organization's file audits that organization again, and passes", async () => {
    await buildFixture(fx);
    withDb(fx.db, (db) => {
      db.prepare("UPDATE organizations SET business_description = 'Patched between builds' WHERE id = 'beta'").run();
      refreshOrganizationFiles(db, treeStoreOf(fx.out), ["beta"]);
    });
    await writePost(fx.content, "alpha/p1.md", postMeta("alpha-p1", { title: "Edited for --org" }));
    const built = await buildPlanning(fx, { orgs: ["alpha"] });
    expect(built.planned).toEqual(["alpha"]);
    expect(built.report.changed).toBe(true);
    const beta = JSON.parse(await readFile(path.join(fx.out, "api/organizations/beta/organization.json"), "utf8")) as { businessDescription: string };
    expect(beta.businessDescription).toBe("Patched between builds");
    await expectCleanTree(fx, "clean-org");
  });

  it("a scheduled post is published by the first build at or after its time, though no input changed", async () => {
    const now = new Date("2026-06-01T12:00:00Z");
    await writePost(fx.content, "gamma/later.md", postMeta("gamma-later", { publishedAt: "2026-06-01T13:00:00Z" }));
    const first = await buildPlanning(fx, { now });
    expect(first.report.orgs.find((org) => org.orgId === "gamma")).toMatchObject({ postsScheduled: 1, nextPublishAt: "2026-06-01T13:00:00.000Z" });
    expect(first.report.nextPublishAt).toBe("2026-06-01T13:00:00.000Z");

    const before = await buildPlanning(fx, { now: new Date("2026-06-01T12:59:59Z") });
    expect(before.planned).toEqual([]);
    expect(before.report).toMatchObject({ changed: false, nextPublishAt: "2026-06-01T13:00:00.000Z" });

    const at = new Date("2026-06-01T13:00:00Z");
    const due = await buildPlanning(fx, { now: at });
    expect(due.planned).toEqual(["gamma"]);
    // The post fallen due is read back whole to be rendered; the others are planned from their heads.
    expect(due.records).toEqual(["gamma/later.md"]);
    expect(due.report.changed).toBe(true);
    expect(due.report.changedPaths.added).toContain("/api/organizations/gamma/contents/gamma-later");
    expect(due.report.nextPublishAt).toBeNull();
    await expectCleanTree(fx, "clean-due", { now: at });
  });
});

/** An organization's figures in a report, whatever the build wrote or kept of it. */
const figuresOf = (report: BuildReport, orgId: string) => {
  const { filesWritten, filesUnchanged, filesRemoved: _removed, ...figures } = report.orgs.find((org) => org.orgId === orgId)!;
  return { ...figures, files: filesWritten + filesUnchanged };
};

describe("a part of an organization whose inputs did not change", () => {
  it("a changed block renders the organization's rows alone: no post is read, parsed or rendered", async () => {
    await buildFixture(fx);
    withDb(fx.db, (db) => db.prepare("UPDATE block_fields SET value = ? WHERE org_id = 'beta' AND block_id = 'hero'").run(JSON.stringify("Hello again")));
    const built = await buildPlanning(fx);
    expect(built.parts).toEqual(["beta rows"]);
    expect(built.read).toEqual([]);
    expect(built.report).toMatchObject({ changed: true, postsParsed: 0, postsReused: 20, postsRendered: 0 });
    expect(built.report.changedPaths).toEqual({
      added: [],
      changed: ["/api/organizations/beta/blocks", "/api/organizations/beta/blocks/by-slug/hero", "/api/organizations/beta/blocks/hero"],
      removed: [],
    });
    await expectCleanTree(fx, "clean-block");
    const clean = await buildFixture(fx, { out: path.join(fx.dir, "clean-figures") });
    expect(figuresOf(built.report, "beta")).toEqual(figuresOf(clean, "beta"));
  });

  it("an edited, added or deleted post renders the organization's posts alone: its blocks are not rendered", async () => {
    const full = await buildPlanning(fx);
    expect(full.blockRenders).toBe(ORGS.length);
    await writePost(fx.content, "beta/p1.md", postMeta("beta-p1", { title: "Edited", category: "news" }), "Edited.\n");
    await writePost(fx.content, "beta/p9.md", postMeta("beta-p9", { publishedAt: "2026-02-01" }), "Added.\n");
    await rm(path.join(fx.content, "beta/p4.md"));
    const built = await buildPlanning(fx);
    expect(built.parts).toEqual(["beta posts"]);
    expect(built.blockRenders).toBe(0);
    // The unchanged posts are planned from their heads: no record of theirs is read.
    expect(built.read).toEqual(["beta/p1.md", "beta/p9.md"]);
    expect(built.records).toEqual([]);
    expect(built.report).toMatchObject({ changed: true, postsParsed: 2, postsRendered: 2 });
    expect(built.report.changedPaths.removed).toEqual([
      "/api/organizations/beta/contents/beta-p4",
      "/api/organizations/beta/contents/beta-p4/references",
      "/api/organizations/beta/contents/by-slug/beta-p4",
    ]);
    await expectCleanTree(fx, "clean-posts");
    const clean = await buildFixture(fx, { out: path.join(fx.dir, "clean-figures") });
    expect(figuresOf(built.report, "beta")).toEqual(figuresOf(clean, "beta"));
  });

  it("a renamed category renders that organization's posts again, as a clean build does", async () => {
    await buildFixture(fx);
    withDb(fx.db, (db) => db.prepare("UPDATE categories SET value = 'Tidings' WHERE org_id = 'gamma' AND slug = 'news'").run());
    const built = await buildPlanning(fx);
    expect(built.parts).toEqual(["gamma posts", "gamma rows"]);
    // Every post of gamma shows its category's name (p1 and p3) or none: those two are read back whole and rendered again.
    expect(built.records).toEqual(["gamma/p1.md", "gamma/p3.md"]);
    // Their files are read for their bodies, not parsed.
    expect(built.read).toEqual(["gamma/p1.md", "gamma/p3.md"]);
    expect(built.report).toMatchObject({ postsParsed: 0, postsRendered: 2 });
    expect(built.report.changedPaths.changed).toContain("/api/organizations/gamma/contents");
    await expectCleanTree(fx, "clean-category");
  });

  it("a scheduled post that falls due while only a block changed is published by that build", async () => {
    const now = new Date("2026-06-01T12:00:00Z");
    await writePost(fx.content, "delta/later.md", postMeta("delta-later", { publishedAt: "2026-06-01T13:00:00Z" }));
    await buildFixture(fx, { now });
    withDb(fx.db, (db) => db.prepare("UPDATE block_fields SET value = ? WHERE org_id = 'delta' AND block_id = 'hero'").run(JSON.stringify("Noon")));
    const at = new Date("2026-06-01T13:00:00Z");
    const due = await buildPlanning(fx, { now: at });
    expect(due.parts).toEqual(["delta posts", "delta rows"]);
    expect(due.records).toEqual(["delta/later.md"]);
    expect(due.report.changedPaths.added).toContain("/api/organizations/delta/contents/delta-later");
    expect(due.report.changedPaths.changed).toContain("/api/organizations/delta/blocks/hero");
    await expectCleanTree(fx, "clean-due", { now: at });
  });

  it("a draft edited without a byte changing, then a post edited: the audit holds the tree to what the sources now publish", async () => {
    await buildFixture(fx);
    // The draft block changes slug: no file changes, so the live tree is kept.
    withDb(fx.db, (db) => db.prepare("UPDATE blocks SET slug = 'teaser-2' WHERE org_id = 'alpha' AND id = 'teaser'").run());
    expect((await buildPlanning(fx)).report.changed).toBe(false);
    await writePost(fx.content, "alpha/p2.md", postMeta("alpha-p2", { title: "Edited after the draft" }));
    const built = await buildPlanning(fx);
    expect(built).toMatchObject({ parts: ["alpha posts"], blockRenders: 0 });
    expect(built.report.changed).toBe(true);
    await expectCleanTree(fx, "clean-draft");
    // Published now, the block's new slug has its file: the rows are planned, the posts kept.
    withDb(fx.db, (db) => db.prepare("UPDATE blocks SET status = 'published' WHERE org_id = 'alpha' AND id = 'teaser'").run());
    const published = await buildPlanning(fx);
    expect(published.parts).toEqual(["alpha rows"]);
    expect(published.report.changedPaths.added).toContain("/api/organizations/alpha/blocks/by-slug/teaser-2");
    await expectCleanTree(fx, "clean-published");
  });
});
