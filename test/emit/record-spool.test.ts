/**
 * The build's record spool (emit/record-spool.ts): a record kept is read back
 * as it was parsed, while the build holds only its head; the spool's file is
 * the build's scratch, gone when a build ends however it ends, and one a
 * killed build left is no obstacle to the next.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openRecordSpool } from "../../src/emit/record-spool.js";
import { treeStoreOf } from "../../src/emit/tree-store.js";
import { recordJsonOf, recordOf, spoolFormOf, type PostRecord, type RecordSpool } from "../../src/model/snapshot.js";
import { buildFixture, buildProblems, fixturesRemovedAfterEach, makeTempDir } from "../fixtures/build-fixture.js";
import { insertCategory, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { postRecord } from "../fixtures/records.js";
import { hashTree } from "../fixtures/tree.js";

const { orgFixture, removeAfterEach } = fixturesRemovedAfterEach();

/** As a build keeps a record it parsed: in the form a parse worker answers, its body while the budget allows. */
const keepWhole = (spool: RecordSpool, record: PostRecord) => spool.keep(spoolFormOf(record), record.body);

const RICH_POST = `---
id: p1
title: "Snow, and what it keeps: a winter's notes"
slug: snow-notes
status: published
publishedAt: 2026-02-03T08:30:00+01:00
category: news
authorName: Ana Núñez
tags: [winter, field-notes]
featuredImage: { url: "https://example.com/snow.jpg", alt: "Snow on a fence" }
references:
  - { source: "Met Office", url: "https://example.com/met", asOf: "2026" }
seoMetadata: { title: "Snow notes", description: "What a winter keeps" }
---
# Snow

It keeps *everything* quiet — even the 🦊 tracks.
`;

describe("the record spool", () => {
  // Held in memory while the budget lasts, in the file past it: every record here is read back from one of them.
  it.each([
    ["held in memory", undefined, false],
    ["in the file past the budget", 0, true],
    ["the first in memory, the others in the file", "the first", true],
  ] as const)("reads a record back as it was kept (%s), and the head it answers holds what planning reads, not the record", async (_, budget, usesFile) => {
    const dir = await makeTempDir("cdsnap-spool-");
    removeAfterEach(dir);
    const inMemory = budget === "the first" ? recordJsonOf(postRecord("acme/2026/snow.md", RICH_POST)).length : budget;
    const spool = openRecordSpool(dir, inMemory);
    try {
      const record = postRecord("acme/2026/snow.md", RICH_POST);
      const kept = structuredClone(record);
      const head = keepWhole(spool, record);
      expect(recordOf(head)).toEqual(kept);
      expect(head).toMatchObject({ file: kept.file, fingerprint: kept.fingerprint, sha256: kept.sha256, body: kept.body, publish: kept.publish });
      expect(head.meta).toEqual({ id: "p1", slug: "snow-notes", status: "published", publishedAt: kept.meta.publishedAt, category: "news" });
      expect(head.lines).toEqual({ id: kept.lines!.id, slug: kept.lines!.slug, category: kept.lines!.category });
      expect(head).not.toHaveProperty("excerpt");

      // A body the build let go is not in the spool either: the record read back has none.
      const { body: _body, ...bodiless } = postRecord("acme/2026/other.md", RICH_POST.replace("id: p1", "id: p2"));
      const other = keepWhole(spool, { ...bodiless });
      expect(other).not.toHaveProperty("body");
      expect(recordOf(other)).toEqual(bodiless);

      // Kept again (a post read back whole after it was parsed), the later record stands.
      const again = keepWhole(spool, postRecord("acme/2026/snow.md", RICH_POST.replace("Snow notes", "Snow, noted")));
      expect(recordOf(again).meta.seoMetadata).toMatchObject({ title: "Snow, noted" });
      // A head of another build's spool finds no record in this one.
      const elsewhereDir = await makeTempDir("cdsnap-spool-");
      removeAfterEach(elsewhereDir);
      const elsewhere = openRecordSpool(elsewhereDir);
      const stranger = keepWhole(elsewhere, postRecord("acme/2026/elsewhere.md", RICH_POST));
      elsewhere.close();
      expect(() => spool.jsonOf(stranger)).toThrow(/acme\/2026\/elsewhere\.md has no record in this build's spool/);
      expect(existsSync(path.join(dir, "records.sqlite"))).toBe(usesFile);
      // The first record is read back as it was after those kept since.
      expect(recordOf(head)).toEqual(kept);
    } finally {
      spool.close();
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it("replaces the file a killed build left", async () => {
    const dir = await makeTempDir("cdsnap-spool-");
    removeAfterEach(dir);
    await writeFile(path.join(dir, "records.sqlite"), "half a page of a killed build's spool");
    const spool = openRecordSpool(dir, 0);
    const head = keepWhole(spool, postRecord("acme/a.md", RICH_POST));
    expect(recordOf(head).meta.title).toBe("Snow, and what it keeps: a winter's notes");
    spool.close();
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("a build's spool", () => {
  const stateFiles = async (out: string) => readdir(treeStoreOf(out).stateDir);

  it("is gone once the build ends, built or refused, and one a killed build left does not stop the next", async () => {
    const fx = await orgFixture();
    withDb(fx.db, (db) => insertCategory(db, "acme", { id: "c1", slug: "news", value: "News", position: 0 }));
    await writePost(fx.content, "acme/snow.md", RICH_POST);
    await writePost(fx.content, "acme/plain.md", postMeta("p2"), "Plain words.\n");
    // Every record in the file: the tree is the one a build holding them in memory makes.
    await buildFixture(fx, { recordsInMemory: 0 });
    expect(await stateFiles(fx.out)).not.toContain("records.sqlite");
    const inMemory = path.join(fx.dir, "in-memory");
    await buildFixture(fx, { out: inMemory });
    expect(await hashTree(fx.out)).toBe(await hashTree(inMemory));
    const answer = JSON.parse(await readFile(path.join(fx.out, "api/organizations/acme/contents/p1.json"), "utf8"));
    expect(answer).toMatchObject({ id: "p1", title: "Snow, and what it keeps: a winter's notes", categoryName: "News", authorName: "Ana Núñez", tags: ["winter", "field-notes"] });

    await writePost(fx.content, "acme/broken.md", postMeta("p2"), "The id of another post.\n");
    expect((await buildProblems(fx, { recordsInMemory: 0 })).map((p) => p.message).join("\n")).toMatch(/id: "p2" is also used by/);
    expect(await stateFiles(fx.out)).not.toContain("records.sqlite");

    const stateDir = treeStoreOf(fx.out).stateDir;
    await mkdir(stateDir, { recursive: true });
    await writeFile(path.join(stateDir, "records.sqlite"), "left by a build killed while it read the posts");
    await writePost(fx.content, "acme/broken.md", postMeta("p3"), "Its own id now.\n");
    const report = await buildFixture(fx, { recordsInMemory: 0 });
    expect(report.changed).toBe(true);
    expect(existsSync(path.join(fx.out, "api/organizations/acme/contents/p3.json"))).toBe(true);
    expect(await stateFiles(fx.out)).not.toContain("records.sqlite");
  });

  it("leaves nothing of a first build that is refused", async () => {
    const fx = await orgFixture();
    await writePost(fx.content, "acme/a.md", postMeta("p1"), "One.\n");
    await writePost(fx.content, "acme/b.md", postMeta("p1"), "The same id.\n");
    expect(await buildProblems(fx)).not.toEqual([]);
    expect(existsSync(treeStoreOf(fx.out).stateDir)).toBe(false);
  });
});
