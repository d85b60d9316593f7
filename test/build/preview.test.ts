/**
 * `build --preview`: the preview tree beside `--out`, with drafts and
 * scheduled posts (each with its status), in a tree store of its own; the
 * public tree exactly as a build without it, and never holding either.
 */
import { readFile } from "node:fs/promises";
import { lstat, readlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { fileOf, type Route } from "../../src/api-paths.js";
import { auditOut } from "../../src/audit/run-audit.js";
import { edgeDocumentFileOf } from "../../src/edge/publish-document.js";
import { previewOutOf, treeStoreOf } from "../../src/emit/tree-store.js";
import { AuditFailedError } from "../../src/errors.js";
import type { ContentList, PreviewContentDetail, PreviewContentSummary } from "../../src/model/api.js";
import { buildFixture, fixturesRemovedAfterEach, type Fixture } from "../fixtures/build-fixture.js";
import { insertOrg, insertSecret, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { auditArgs, buildArgs, runCli } from "../fixtures/cli.js";
import { hashTree, listFiles, plant, readTreeJson } from "../fixtures/tree.js";

const { fixture } = fixturesRemovedAfterEach();

const ORG = "acme";
const DRAFT_CANARY = "CANARY-DRAFT-4f1c9e";
const SCHEDULED_CANARY = "CANARY-SCHEDULED-8b27d0";
const ARCHIVED_CANARY = "CANARY-ARCHIVED-30aa51";
const NOW = new Date("2026-03-01T00:00:00Z");
const DUE = new Date("2026-06-01T08:00:00Z");

/** One organization with a published post, a draft, a scheduled and an archived one; the last three hold canaries. */
async function editorialFixture(): Promise<Fixture> {
  const fx = await fixture();
  withDb(fx.db, (db) => insertOrg(db, { id: ORG, slug: ORG }));
  await writePost(fx, "acme/live.md", postMeta("live", { publishedAt: "2026-01-10" }));
  await writePost(fx, "acme/draft.md", postMeta("draft", { status: "draft", publishedAt: "2026-02-01", title: `Draft ${DRAFT_CANARY}` }), `Body ${DRAFT_CANARY}\n`);
  await writePost(fx, "acme/soon.md", postMeta("soon", { publishedAt: "2026-06-01T08:00:00Z", title: `Soon ${SCHEDULED_CANARY}` }), `Body ${SCHEDULED_CANARY}\n`);
  await writePost(fx, "acme/old.md", postMeta("old", { status: "archived", publishedAt: "2025-01-01", title: `Old ${ARCHIVED_CANARY}` }), `Body ${ARCHIVED_CANARY}\n`);
  return fx;
}

const previewOf = (fx: Fixture) => previewOutOf(fx.out);
const contents = (out: string) => readTreeJson<ContentList>(out, fileOf({ kind: "contents", orgId: ORG }));
const postRoutes = (id: string, slug: string): Route[] => [
  { kind: "content", orgId: ORG, id },
  { kind: "contentBySlug", orgId: ORG, slug },
  { kind: "references", orgId: ORG, id },
];

/** Every file of a tree (through its link) and the bytes it holds, as one text. */
async function treeText(out: string): Promise<string> {
  const root = path.join(out, ".");
  const files = await listFiles(root);
  const texts = await Promise.all(files.map((rel) => readFile(path.join(root, rel), "utf8")));
  return files.map((rel, i) => `${rel}\n${texts[i]}`).join("\n");
}

describe("build --preview", () => {
  test("the public tree is byte for byte the one a build without --preview makes", async () => {
    const plain = await editorialFixture();
    const withPreview = await editorialFixture();
    const without = await buildFixture(plain, { now: NOW });
    const report = await buildFixture(withPreview, { now: NOW, preview: true });
    expect(await hashTree(withPreview.out)).toBe(await hashTree(plain.out));
    expect(without.preview).toBeUndefined();
    expect(report.changedPaths).toEqual(without.changedPaths);
    expect(report.preview).toMatchObject({ out: previewOf(withPreview), changed: true });
  });

  test("the preview tree is a tree store of its own beside --out", async () => {
    const fx = await editorialFixture();
    await buildFixture(fx, { now: NOW, preview: true });
    const store = treeStoreOf(previewOf(fx));
    expect((await lstat(store.out)).isSymbolicLink()).toBe(true);
    expect(await readlink(store.out)).toMatch(/^\.site\.preview\.cdsnap\/gens\/\d{6}\/tree$/);
    expect((await lstat(path.join(store.stateDir, "state.sqlite"))).isFile()).toBe(true);
    // The edge document is the public tree's alone.
    await expect(lstat(edgeDocumentFileOf(store.out))).rejects.toMatchObject({ code: "ENOENT" });
  });

  test("the preview lists published, scheduled and draft posts newest first, each with its status; never an archived one", async () => {
    const fx = await editorialFixture();
    await buildFixture(fx, { now: NOW, preview: true });
    const items = (await contents(previewOf(fx))).items as PreviewContentSummary[];
    expect(items.map((i) => [i.id, i.status, i.publishedAt])).toEqual([
      ["soon", "scheduled", "2026-06-01"],
      ["draft", "draft", "2026-02-01"],
      ["live", "published", "2026-01-10"],
    ]);
    for (const [id, status] of [["draft", "draft"], ["soon", "scheduled"], ["live", "published"]] as const) {
      const detail = await readTreeJson<PreviewContentDetail>(previewOf(fx), fileOf({ kind: "content", orgId: ORG, id }));
      expect(detail).toMatchObject({ id, status });
      const bySlug = await readTreeJson<PreviewContentDetail>(previewOf(fx), fileOf({ kind: "contentBySlug", orgId: ORG, slug: id }));
      expect(bySlug).toEqual(detail);
    }
    const files = await listFiles(path.join(previewOf(fx), "."));
    for (const route of postRoutes("old", "old")) expect(files).not.toContain(fileOf(route));
    expect(await treeText(previewOf(fx))).not.toContain(ARCHIVED_CANARY);
  });

  test("the preview's pages are slices of its list, drafts and scheduled posts with their status; the public pages hold neither", async () => {
    const fx = await editorialFixture();
    await buildFixture(fx, { now: NOW, preview: true, pageSize: 2 });
    const page = (out: string, n: number) => readTreeJson<{ items: PreviewContentSummary[] }>(out, fileOf({ kind: "contentsPage", orgId: ORG, page: String(n) }));
    expect((await page(previewOf(fx), 1)).items.map((i) => [i.id, i.status])).toEqual([["soon", "scheduled"], ["draft", "draft"]]);
    expect((await page(previewOf(fx), 2)).items.map((i) => [i.id, i.status])).toEqual([["live", "published"]]);
    expect((await page(fx.out, 1)).items.map((i) => i.id)).toEqual(["live"]);
    expect((await auditOut({ db: fx.db, out: fx.out, content: fx.content, now: NOW, preview: true })).ok).toBe(true);
  });

  test("neither the public tree nor the edge document holds a draft or a scheduled post, not even a word of one", async () => {
    const fx = await editorialFixture();
    await buildFixture(fx, { now: NOW, preview: true });
    const files = await listFiles(path.join(fx.out, "."));
    for (const route of [...postRoutes("draft", "draft"), ...postRoutes("soon", "soon")]) expect(files).not.toContain(fileOf(route));
    expect((await contents(fx.out)).items.map((i) => i.id)).toEqual(["live"]);
    const publicBytes = await treeText(fx.out);
    const edgeDocument = await readFile(edgeDocumentFileOf(fx.out), "utf8");
    for (const canary of [DRAFT_CANARY, SCHEDULED_CANARY]) {
      expect(publicBytes).not.toContain(canary);
      expect(edgeDocument).not.toContain(canary);
      expect(await treeText(previewOf(fx))).toContain(canary);
    }
  });

  test("a scheduled post fallen due shows published in the preview, rendered again though its file did not change", async () => {
    const fx = await editorialFixture();
    await buildFixture(fx, { now: NOW, preview: true });
    const again = await buildFixture(fx, { now: NOW, preview: true });
    expect(again.preview).toMatchObject({ changed: false });

    const due = await buildFixture(fx, { now: DUE, preview: true });
    expect(due.preview).toMatchObject({ changed: true, postsRendered: 1 });
    const items = (await contents(previewOf(fx))).items as PreviewContentSummary[];
    expect(items.find((i) => i.id === "soon")?.status).toBe("published");
    const detail = await readTreeJson<PreviewContentDetail>(previewOf(fx), fileOf({ kind: "content", orgId: ORG, id: "soon" }));
    expect(detail.status).toBe("published");
    expect((await contents(fx.out)).items.map((i) => i.id)).toEqual(["soon", "live"]);
  });

  test("a draft edited into a published post leaves the preview's status and enters the public tree", async () => {
    const fx = await editorialFixture();
    await buildFixture(fx, { now: NOW, preview: true });
    await writePost(fx, "acme/draft.md", postMeta("draft", { publishedAt: "2026-02-01", title: "Now public" }));
    await buildFixture(fx, { now: NOW, preview: true });
    const detail = await readTreeJson<PreviewContentDetail>(previewOf(fx), fileOf({ kind: "content", orgId: ORG, id: "draft" }));
    expect(detail).toMatchObject({ status: "published", title: "Now public" });
    expect((await contents(fx.out)).items.map((i) => i.id)).toEqual(["draft", "live"]);
  });
});

describe("the audit of both trees", () => {
  test("the audit refuses a public tree into which a draft's file was copied", async () => {
    const fx = await editorialFixture();
    await buildFixture(fx, { now: NOW, preview: true });
    const rel = fileOf({ kind: "content", orgId: ORG, id: "draft" });
    await plant(fx.out, rel, await readFile(path.join(previewOf(fx), rel)));
    const result = await auditOut({ db: fx.db, out: fx.out, content: fx.content, now: NOW });
    expect(result.ok).toBe(false);
    expect(result.problems.map((p) => p.where)).toContain(rel);
    expect((await auditOut({ db: fx.db, out: fx.out, content: fx.content, now: NOW, preview: true })).ok).toBe(true);
  });

  test("a public post file without its status is refused in the preview tree, and one with it in the public tree", async () => {
    const fx = await editorialFixture();
    await buildFixture(fx, { now: NOW, preview: true });
    const rel = fileOf({ kind: "content", orgId: ORG, id: "live" });
    const publicFile = await readFile(path.join(fx.out, rel));
    const previewFile = await readFile(path.join(previewOf(fx), rel));
    await plant(previewOf(fx), rel, publicFile);
    await plant(fx.out, rel, previewFile);
    const preview = await auditOut({ db: fx.db, out: fx.out, content: fx.content, now: NOW, preview: true });
    expect(preview.problems.find((p) => p.where === rel)?.message).toMatch(/preview content detail response.*status/);
    const visible = await auditOut({ db: fx.db, out: fx.out, content: fx.content, now: NOW });
    expect(visible.problems.find((p) => p.where === rel)?.message).toMatch(/content detail response.*status/);
  });

  test("a preview tree holding a secret fails its audit: the public tree is published, the preview one is not", async () => {
    const fx = await editorialFixture();
    await buildFixture(fx, { now: NOW, preview: true });
    const before = await hashTree(previewOf(fx));
    // The secret's value is in the draft alone: the public tree is safe, the preview is not.
    withDb(fx.db, (db) => insertSecret(db, ORG, "stripe", DRAFT_CANARY));
    await writePost(fx, "acme/live.md", postMeta("live", { publishedAt: "2026-01-10", title: "Edited" }));
    const failure = await buildFixture(fx, { now: NOW, preview: true }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AuditFailedError);
    expect((failure as AuditFailedError).message).toMatch(/preview tree .* the public tree was built/);
    expect((failure as AuditFailedError).problems.some((p) => /secret "stripe"/.test(p.message))).toBe(true);
    expect((await contents(fx.out)).items.map((i) => i.title)).toEqual(["Edited"]);
    expect(await hashTree(previewOf(fx))).toBe(before);
    const audit = await auditOut({ db: fx.db, out: fx.out, content: fx.content, now: NOW, preview: true });
    expect(audit.ok).toBe(false);
  });
});

describe("the command line", () => {
  test("build --preview reports the preview tree, audit --preview passes it, and a secret in a draft fails the command with exit 1", async () => {
    const fx = await editorialFixture();
    // At the clock, past the scheduled post's date: it is published by now.
    const built = await runCli(buildArgs(fx, "--preview"));
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout).toMatch(/^preview: built \S+site\.preview \(generation 000001\) with 1 draft and 0 scheduled posts in \d+ ms$/m);
    const audited = await runCli(auditArgs(fx, {}, "--preview"));
    expect(audited.code, audited.stderr).toBe(0);

    withDb(fx.db, (db) => insertSecret(db, ORG, "stripe", DRAFT_CANARY));
    const failed = await runCli(buildArgs(fx, "--preview"));
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("the audit of the new preview tree found");
    expect(failed.stderr).not.toContain(DRAFT_CANARY);
  });
});
