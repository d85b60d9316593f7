/**
 * A rebuild costs what changed: the file calls a build makes inside `--out`
 * and its state folder, counted through the real `node:fs`, and the file
 * entries and post records it reads from the build state, are the same for an
 * organization of 20 posts and of 80 when one post is edited. (The posts
 * themselves are all looked at: that is reading the sources, and when one
 * changed, each one's stored identity is compared; and each post's head, which
 * holds its list item: that is the contents list.)
 */
import { cp, rename, rm } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { buildFixture, makeFixture, removeDir, type Fixture } from "../fixtures/build-fixture.js";
import { insertCategory, insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree } from "../fixtures/tree.js";

const { rows } = vi.hoisted(() => ({ rows: { entries: 0, records: 0, identities: 0, heads: 0 } }));

// The build state's file entries and post records, counted as the build reads them.
vi.mock("../../src/emit/file-table.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/emit/file-table.js")>();
  const counted = <M extends ReadonlyMap<string, unknown>>(entries: M): M => {
    rows.entries += entries.size;
    return entries;
  };
  return {
    ...actual,
    storedFiles: (file: string) => {
      const table = actual.storedFiles(file);
      return {
        get: (rel: string) => {
          rows.entries++;
          return table.get(rel);
        },
        of: (...args: Parameters<typeof table.of>) => counted(table.of(...args)),
        count: table.count,
        all: () => counted(table.all()),
        pagesOf: (orgId: string) => counted(table.pagesOf(orgId)),
        // Paths alone, no entry: a rebuild with no base generation links every live file.
        eachRel: table.eachRel,
      };
    },
  };
});
vi.mock("../../src/emit/build-state.js", async (importOriginal) => {
  const { reportingRecordReads } = await import("../fixtures/state-reads.js");
  return reportingRecordReads(
    await importOriginal(),
    () => rows.records++,
    (count) => (rows.identities += count),
    (count) => (rows.heads += count),
  );
});

const { calls, counted, SYNC, ASYNC } = vi.hoisted(() => {
  const calls = { under: null as string | null, byName: new Map<string, number>() };
  const counted = <F extends (...args: never[]) => unknown>(name: string, fn: F): F =>
    ((...args: Parameters<F>) => {
      const target = args[0] as unknown;
      if (calls.under !== null && typeof target === "string" && target.startsWith(calls.under)) {
        calls.byName.set(name, (calls.byName.get(name) ?? 0) + 1);
      }
      return fn(...args);
    }) as F;
  const SYNC = ["lstatSync", "statSync", "readdirSync", "linkSync", "openSync", "unlinkSync", "mkdirSync", "readFileSync", "rmdirSync", "writeFileSync"] as const;
  const ASYNC = ["lstat", "stat", "readdir", "link", "readFile", "rm", "unlink", "mkdir", "writeFile", "rename"] as const;
  return { calls, counted, SYNC, ASYNC };
});

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const wrapped: Record<string, unknown> = { ...fs };
  for (const name of SYNC) wrapped[name] = counted(name, fs[name] as never);
  return { ...wrapped, default: wrapped };
});
vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs/promises")>();
  const wrapped: Record<string, unknown> = { ...fs };
  for (const name of ASYNC) wrapped[name] = counted(`${name} (promise)`, fs[name] as never);
  return { ...wrapped, default: wrapped };
});

const ORG = "acme";

async function organization(fx: Fixture, posts: number): Promise<void> {
  withDb(fx.db, (db) => {
    insertOrg(db, { id: ORG, name: "Acme", slug: "acme" });
    insertCategory(db, ORG, { id: "c1", slug: "news", value: "News", position: 0 });
  });
  for (let i = 0; i < posts; i++) {
    await writePost(fx.content, `${ORG}/p${i}.md`, postMeta(`p${i}`, { category: i % 2 ? "news" : undefined }), `Body ${i}.\n`);
  }
}

/** The file calls inside `--out` and its state folder during one build, and the state's file entries and post records it read. */
async function countedBuild(fx: Fixture): Promise<Map<string, number>> {
  calls.byName = new Map();
  calls.under = path.join(path.dirname(fx.out), `.${path.basename(fx.out)}`);
  rows.entries = 0;
  rows.records = 0;
  rows.identities = 0;
  rows.heads = 0;
  try {
    await buildFixture(fx);
  } finally {
    calls.under = null;
  }
  const out = new Map([...calls.byName, ["state file entries read", rows.entries], ["state post records read", rows.records], ["state post identities read", rows.identities], ["state post heads read", rows.heads]]);
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

describe("a rebuild's file calls do not grow with the organization", () => {
  const fixtures: Fixture[] = [];
  beforeEach(() => void (fixtures.length = 0));
  afterEach(async () => Promise.all(fixtures.map((fx) => removeDir(fx.dir))));

  async function editCosts(posts: number) {
    const fx = await makeFixture();
    fixtures.push(fx);
    await organization(fx, posts);
    // One page of 100 in both organizations, which the later builds keep: each edit then rewrites the same
    // files whatever the size (pages.test.ts holds an edit to the one page that holds the post).
    await buildFixture(fx, { pageSize: 100 });
    // The first edit makes the generation the next one is made from.
    await writePost(fx.content, `${ORG}/p1.md`, postMeta("p1", { title: "First edit" }), "Edited.\n");
    await buildFixture(fx);
    await writePost(fx.content, `${ORG}/p3.md`, postMeta("p3", { title: "Second edit" }), "Edited again.\n");
    const edit = await countedBuild(fx);
    const noOp = await countedBuild(fx);
    const clean = path.join(fx.dir, "clean");
    await buildFixture(fx, { out: clean, pageSize: 100 });
    expect(await hashTree(fx.out)).toBe(await hashTree(clean));
    return { edit, noOp };
  }

  it("one post edited, and nothing changed, in 20 posts and in 80", async () => {
    const small = await editCosts(20);
    const large = await editCosts(80);
    const identities = "state post identities read";
    const heads = "state post heads read";
    const apart = (costs: Map<string, number>) => new Map([...costs].filter(([name]) => name !== identities && name !== heads));
    expect(apart(large.edit)).toEqual(apart(small.edit));
    expect(large.noOp).toEqual(small.noOp);
    expect(small.edit.get(identities)).toBe(20);
    // An edit writes the post's two files, the list, its page and its category's (p3 is a news post),
    // and looks at no tree file one by one.
    expect(small.edit.get("openSync")).toBe(5);
    expect(small.edit.get("lstatSync") ?? 0).toBeLessThanOrEqual(2);
    expect(small.noOp.get("openSync") ?? 0).toBe(0);
    // It reads no post's record, and the entries of the files it writes and the organization's own files:
    // fewer than the three files of each of the smaller organization's 20 posts.
    expect(small.edit.get("state post records read")).toBe(0);
    expect(small.edit.get("state file entries read")).toBeGreaterThan(0);
    expect(small.edit.get("state file entries read")).toBeLessThan(3 * 20);
    // Nothing changed: the walk's fingerprints are those recorded, so no post's stored identity is read.
    expect(small.noOp.get("state post identities read")).toBe(0);
  });

  it("a post edited in place (its list item as it was) reads its own head alone, and writes its own files alone", async () => {
    const inPlace = async (posts: number) => {
      const fx = await makeFixture();
      fixtures.push(fx);
      await organization(fx, posts);
      await buildFixture(fx, { pageSize: 100 });
      await buildFixture(fx);
      // New references: no list item shows them, so the lists and pages stand as they are.
      const meta = postMeta("p3", { category: "news" });
      await writePost(fx.content, `${ORG}/p3.md`, { ...meta, references: [{ source: "An archive", url: "https://example.com/a" }] }, "Body 3.\n");
      const edit = await countedBuild(fx);
      await writePost(fx.content, `${ORG}/p3.md`, { ...meta, references: [{ source: "Another archive", url: "https://example.com/b" }] }, "Body 3.\n");
      const again = await countedBuild(fx);
      const clean = path.join(fx.dir, "clean");
      await buildFixture(fx, { out: clean, pageSize: 100 });
      expect(await hashTree(fx.out)).toBe(await hashTree(clean));
      return { edit, again };
    };
    const small = await inPlace(20);
    const large = await inPlace(80);
    const identities = "state post identities read";
    const apart = (costs: Map<string, number>) => new Map([...costs].filter(([name]) => name !== identities));
    expect(apart(large.again)).toEqual(apart(small.again));
    expect(small.again.get("state post heads read")).toBe(1);
    // The post's own files (by id, by slug, its references: the two with the same bytes written once)
    // and nothing else: not the list, its page nor its category's.
    expect(small.again.get("openSync")).toBe(3);
    expect(small.again.get("state post records read")).toBe(0);
  });

  it("an edit reads the stored identities of its own folder alone", async () => {
    const fx = await makeFixture();
    fixtures.push(fx);
    withDb(fx.db, (db) => insertOrg(db, { id: ORG, name: "Acme", slug: "acme" }));
    // Two folders of 20, and one deeper that the first's key range also covers.
    for (const folder of ["2025", "2026", "2026/drafts"]) {
      for (let i = 0; i < 20; i++) await writePost(fx.content, `${ORG}/${folder}/p${i}.md`, postMeta(`${folder}-p${i}`.replace("/", "-")), `Body ${i}.\n`);
    }
    await buildFixture(fx);
    await buildFixture(fx);
    await writePost(fx.content, `${ORG}/2026/p3.md`, postMeta("2026-p3", { title: "Edited" }), "Edited.\n");
    const edit = await countedBuild(fx);
    expect(edit.get("state post identities read")).toBe(20);
    expect((await countedBuild(fx)).get("state post identities read")).toBe(0);
    const clean = path.join(fx.dir, "clean");
    await buildFixture(fx, { out: clean });
    expect(await hashTree(fx.out)).toBe(await hashTree(clean));
  });

  it("a fresh checkout of the same posts (new inodes and times) parses and renders nothing", async () => {
    const fx = await makeFixture();
    fixtures.push(fx);
    await organization(fx, 20);
    const first = await buildFixture(fx);
    const copy = `${fx.content}.checkout`;
    await cp(fx.content, copy, { recursive: true });
    await rm(fx.content, { recursive: true });
    await rename(copy, fx.content);
    const report = await buildFixture(fx);
    expect(report).toMatchObject({ changed: false, postsParsed: 0, postsReused: 20, postsRendered: 0, generation: first.generation });
    // The checkout's new fingerprints are recorded: the next build finds them as they were, reading no identity.
    expect((await countedBuild(fx)).get("state post identities read")).toBe(0);
    await writePost(fx.content, `${ORG}/p5.md`, postMeta("p5", { title: "After checkout" }));
    expect(await buildFixture(fx)).toMatchObject({ changed: true, postsParsed: 1, postsRendered: 1 });
  });
});
