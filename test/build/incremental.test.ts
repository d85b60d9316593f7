import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, cp, mkdir, readFile, rename, rm, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mulberry32 } from "../../bench/prng.js";
import { pathOf } from "../../src/api-paths.js";
import { readNextPublishAt, readState, stateFileOf } from "../../src/emit/build-state.js";
import { refreshOrganizationFiles } from "../../src/emit/organization-file.js";
import { previewOutOf, treeStoreOf, type Generation } from "../../src/emit/tree-store.js";
import { buildFixture, type Fixture, makeFixture, removeDir } from "../fixtures/build-fixture.js";
import { insertBlock, insertCategory, insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree, identitiesOf, liveGenerationOf, readPages } from "../fixtures/tree.js";
import { buildArgs, runCli } from "../fixtures/cli.js";
import { REPO_ROOT } from "../fixtures/repo.js";

const ORG = "acme";

/** A generation's build state without what differs between two trees of equal bytes (inodes, times, the audit's salt). */
function comparableState(out: string, gen: Generation) {
  const state = readState(treeStoreOf(out), gen);
  expect(state.files.all().size).toBeGreaterThan(0);
  return {
    files: [...state.files.all()].map(([rel, [sha, , , size]]) => [rel, sha, size]).sort(),
    pages: [...state.pages].sort(),
    orgs: [...state.orgs].sort(),
    // What the next build's walk is compared with: a wrong listing would keep an organization whose posts changed.
    listings: [...state.listings].sort(),
    posts: [...state.orgs.keys()].sort().map((orgId) => [orgId, [...state.headsOf(orgId)].sort().map(([file, head]) => [file, head, state.recordOf(file)])]),
    audit: [...state.auditOf(state.pages.keys())].sort(),
  };
}

async function seedOrg(fx: Fixture, posts: number): Promise<void> {
  withDb(fx.db, (db) => {
    insertOrg(db, { id: ORG, name: "Acme", slug: "acme" });
    insertCategory(db, ORG, { id: "c1", slug: "news", value: "News", position: 0 });
    insertCategory(db, ORG, { id: "c2", slug: "guides", value: "Guides", position: 1 });
    insertBlock(db, ORG, {
      id: "hero",
      slug: "hero",
      name: "Hero",
      status: "published",
      position: 0,
      fields: [{ key: "title", type: "text", value: "Hello" }],
      pages: ["home"],
    });
  });
  for (let i = 0; i < posts; i++) {
    await writePost(
      fx.content,
      `${ORG}/p${i}.md`,
      postMeta(`p${i}`, { category: i % 3 === 0 ? undefined : i % 3 === 1 ? "news" : "guides", publishedAt: `2026-01-${String((i % 28) + 1).padStart(2, "0")}` }),
      `Body of post ${i} with a citation [1].\n`,
    );
  }
}

describe("incremental builds", () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await makeFixture();
    await seedOrg(fx, 30);
  });
  afterEach(async () => removeDir(fx.dir));

  it("after any sequence of edits, an incremental build is byte-identical to a clean build", async () => {
    // A second organization, edited now and then: most builds find it unchanged and keep it as it is.
    const OTHER = "beta";
    withDb(fx.db, (db) => insertOrg(db, { id: OTHER, name: "Beta", slug: "beta" }));
    for (let i = 0; i < 4; i++) await writePost(fx.content, `${OTHER}/b${i}.md`, postMeta(`b${i}`), `Beta body ${i}.\n`);
    const random = mulberry32(20261123);
    // The build clock: a day further at each step, so scheduled posts fall due between builds.
    const clockAt = (n: number) => Date.parse("2026-03-01T00:00:00Z") + n * 86_400_000;
    let next = 30;
    // Where each live post's file is now (posts move between files too).
    const fileOf = new Map(Array.from({ length: 30 }, (_, i) => [i, `${ORG}/p${i}.md`]));
    const pick = () => [...fileOf.keys()][Math.floor(random() * fileOf.size)]!;
    await buildFixture(fx);
    const edits: ((() => Promise<void>) | (() => void))[] = [
      async () => {
        const i = pick();
        await writePost(fx.content, fileOf.get(i)!, postMeta(`p${i}`, { title: `Edited ${random()}` }), `New body ${random()}\n`);
      },
      async () => {
        const i = pick();
        await writePost(fx.content, fileOf.get(i)!, postMeta(`p${i}`, { status: random() < 0.5 ? "draft" : "published" }));
      },
      async () => {
        const i = next++;
        fileOf.set(i, `${ORG}/new/p${i}.md`);
        await writePost(fx.content, fileOf.get(i)!, postMeta(`p${i}`, { category: "guides" }));
      },
      async () => {
        if (fileOf.size < 5) return;
        const i = pick();
        await rm(path.join(fx.content, fileOf.get(i)!));
        fileOf.delete(i);
      },
      async () => {
        const i = pick();
        const moved = `${ORG}/moved/${step}-p${i}.md`;
        await writePost(fx.content, moved, await readFile(path.join(fx.content, fileOf.get(i)!)));
        await rm(path.join(fx.content, fileOf.get(i)!));
        fileOf.set(i, moved);
      },
      () =>
        withDb(fx.db, (db) => db.prepare("UPDATE categories SET value = ? WHERE org_id = ? AND id = 'c1'").run(`News ${random()}`, ORG)),
      () =>
        withDb(fx.db, (db) =>
          db.prepare("UPDATE block_fields SET value = ? WHERE org_id = ? AND block_id = 'hero'").run(JSON.stringify(`Hi ${random()}`), ORG),
        ),
      // A block unpublished or published again: its files and its page membership come and go.
      () =>
        withDb(fx.db, (db) =>
          db.prepare("UPDATE blocks SET status = ? WHERE org_id = ? AND id = 'hero'").run(random() < 0.5 ? "draft" : "published", ORG),
        ),
      async () => {
        const when = new Date(Date.now() - Math.floor(random() * 1e6));
        await utimes(path.join(fx.content, fileOf.get(pick())!), when, when);
      },
      async () => {
        const i = pick();
        await writePost(fx.content, fileOf.get(i)!, postMeta(`p${i}`, { publishedAt: "2099-01-01" }));
      },
      // Scheduled one to three steps ahead of the build clock: a later build publishes it with no byte changed.
      async () => {
        const i = pick();
        const publishedAt = new Date(clockAt(step + 1 + Math.floor(random() * 3))).toISOString().slice(0, 10);
        await writePost(fx.content, fileOf.get(i)!, postMeta(`p${i}`, { publishedAt }));
      },
      // A new slug: the post's old by-slug file goes.
      async () => {
        const i = pick();
        await writePost(fx.content, fileOf.get(i)!, postMeta(`p${i}`, { slug: `p${i}-renamed-${step}` }));
      },
      // A fresh checkout: every post file new (new inodes and times), most with the same bytes.
      async () => {
        const copy = `${fx.content}.checkout`;
        await cp(fx.content, copy, { recursive: true });
        await rm(fx.content, { recursive: true });
        await rename(copy, fx.content);
        if (random() < 0.5) {
          const i = pick();
          await writePost(fx.content, fileOf.get(i)!, postMeta(`p${i}`, { title: `Checked out ${random()}` }));
        }
      },
      async () => {
        const i = Math.floor(random() * 4);
        await writePost(fx.content, `${OTHER}/b${i}.md`, postMeta(`b${i}`, { title: `Beta ${random()}` }), `Beta body ${random()}\n`);
      },
      // One post's references changed, or two posts' (a draft may be one), front matter and body otherwise
      // as they are: each keeps its place and list item, so the build renders only their files and keeps
      // the organization's lists and pages. A paragraph added to a short body changes its excerpt: not in place.
      async () => {
        for (const i of new Set([pick(), ...(random() < 0.5 ? [pick()] : [])])) {
          const file = path.join(fx.content, fileOf.get(i)!);
          const text = (await readFile(file, "utf8")).replace(/^references:\n(  .*\n)*/m, "");
          const end = text.indexOf("\n---\n", 4);
          const references = `references:\n  - source: Source ${step}\n    url: https://example.com/${Math.floor(random() * 1e6)}\n`;
          await writeFile(file, `${text.slice(0, end + 1)}${references}${text.slice(end + 1)}`);
          if (random() < 0.3) await appendFile(file, `\nA later paragraph, ${random()}.\n`);
        }
      },
      // A PATCH through the write proxy between builds: the live organization file is replaced.
      () =>
        withDb(fx.db, (db) => {
          db.prepare("UPDATE organizations SET business_description = ? WHERE id = ?").run(`Tea ${random()}`, ORG);
          refreshOrganizationFiles(db, treeStoreOf(fx.out), [ORG]);
        }),
    ];
    // Every kind of edit once, in a random order, then as many drawn at random.
    const order = edits.map((edit) => ({ edit, key: random() })).sort((a, b) => a.key - b.key).map(({ edit }) => edit);
    let step = 0;
    for (; step < 2 * edits.length; step++) {
      await (order[step] ?? edits[Math.floor(random() * edits.length)]!)();
      const before = await liveGenerationOf(fx.out);
      const beforeHash = await hashTree(before.tree);
      const now = new Date(clockAt(step));
      const report = await buildFixture(fx, { ...(step % 2 === 0 ? { bodyBudget: 0, recordsInMemory: 0 } : {}), now });
      // The next generation is made from the one before last and shares most
      // files with the live one by hard link: the tree that was live is never written into.
      expect(await hashTree(before.tree), `step ${step}: the tree that was live`).toBe(beforeHash);
      const clean = path.join(fx.dir, `clean-${step}`);
      await buildFixture(fx, { out: clean, now });
      expect(await hashTree(fx.out), `step ${step}`).toBe(await hashTree(clean));
      for (const orgId of [ORG, OTHER]) {
        expect(await readPages(await liveGenerationOf(fx.out), orgId)).toEqual(await readPages(await liveGenerationOf(clean), orgId));
      }
      // The state the next build trusts, written row by row, says what a clean build's says.
      // (A build whose bytes all came out the same keeps the live generation and its state.)
      if (report.changed) {
        expect(comparableState(fx.out, await liveGenerationOf(fx.out)), `step ${step}: state`).toEqual(
          comparableState(clean, await liveGenerationOf(clean)),
        );
      }
    }
  });

  it("posts edited in place, over and over and with other edits between, build what a clean build makes, in both trees", async () => {
    const random = mulberry32(20261126);
    const clockAt = (n: number) => Date.parse("2026-03-01T00:00:00Z") + n * 86_400_000;
    // Drafts and a scheduled post among them: in place too, though no list shows them (the preview's does).
    for (const i of [4, 5]) await writePost(fx.content, `${ORG}/p${i}.md`, postMeta(`p${i}`, { status: "draft", category: "news" }), "A draft.\n");
    await writePost(fx.content, `${ORG}/p6.md`, postMeta("p6", { publishedAt: "2027-01-01" }), "Scheduled.\n");
    await buildFixture(fx, { preview: true, now: new Date(clockAt(0)) });
    const pick = () => Math.floor(random() * 30);
    for (let step = 1; step <= 16; step++) {
      for (const i of new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, pick))) {
        const file = path.join(fx.content, `${ORG}/p${i}.md`);
        const text = (await readFile(file, "utf8")).replace(/^references:\n(  .*\n)*/m, "");
        const end = text.indexOf("\n---\n", 4);
        const references = `references:\n  - source: Source ${step}\n    url: https://example.com/${Math.floor(random() * 1e6)}\n`;
        await writeFile(file, `${text.slice(0, end + 1)}${references}${text.slice(end + 1)}`);
      }
      // Now and then an edit that moves a post, or one of its list item: those builds plan the organization whole.
      const moved = pick();
      if (step % 5 === 0) await writePost(fx.content, `${ORG}/p${moved}.md`, postMeta(`p${moved}`, { title: `Moved ${step}`, publishedAt: "2026-02-02" }));
      // Now and then a block too, in the same build: the rows part is planned while the posts stay in place.
      if (step % 3 === 0) {
        withDb(fx.db, (db) => db.prepare("UPDATE block_fields SET value = ? WHERE org_id = ? AND block_id = 'hero'").run(JSON.stringify(`Hi ${step}`), ORG));
      }
      const now = new Date(clockAt(step));
      const report = await buildFixture(fx, { preview: true, now });
      const clean = path.join(fx.dir, `clean-${step}`);
      await buildFixture(fx, { out: clean, preview: true, now });
      for (const [live, fresh] of [[fx.out, clean], [previewOutOf(fx.out), previewOutOf(clean)]] as const) {
        expect(await hashTree(live), `step ${step}: ${live}`).toBe(await hashTree(fresh));
        const changed = live === fx.out ? report.changed : report.preview!.changed;
        if (changed) expect(comparableState(live, await liveGenerationOf(live)), `step ${step}: state of ${live}`).toEqual(comparableState(fresh, await liveGenerationOf(fresh)));
      }
    }
  });

  it("with --verify, whatever was left in the generation before last, the next tree is exactly the clean build", async () => {
    await buildFixture(fx);
    const first = await liveGenerationOf(fx.out);
    await writePost(fx.content, `${ORG}/p1.md`, postMeta("p1", { category: "news", title: "Second" }));
    await buildFixture(fx);
    // The generation before last (the next build's raw material) tampered with:
    // a stray file and folder, a link out, a file replaced, a folder where a file belongs.
    const contents = path.join(first.tree, "api/organizations", ORG, "contents");
    await writeFile(path.join(contents, "stray.json"), "{}");
    await mkdir(path.join(first.tree, "api/organizations", ORG, "stray-folder"));
    await symlink("/etc/passwd", path.join(contents, "p3.json.link"));
    await rm(path.join(contents, "p2.json"));
    await writeFile(path.join(contents, "p2.json"), '{"tampered":true}');
    await rm(path.join(contents, "p4.json"));
    await mkdir(path.join(contents, "p4.json"));
    await writePost(fx.content, `${ORG}/p1.md`, postMeta("p1", { category: "news", title: "Third" }));
    // Outside the contract (only cdsnap writes there): --verify trusts nothing the state says and makes the tree from nothing.
    const report = await buildFixture(fx, { verify: true });
    expect(report).toMatchObject({ changed: true, postsParsed: 30, postsReused: 0, postsRendered: 30 });
    // p1, rewritten with postMeta's date (the 10th), is on page 1 of the list (20 a page) and of the news posts.
    expect(report.changedPaths.changed).toEqual(
      [
        pathOf({ kind: "contents", orgId: ORG }),
        pathOf({ kind: "contentsPage", orgId: ORG, page: "1" }),
        pathOf({ kind: "categoryContentsPage", orgId: ORG, slug: "news", page: "1" }),
        pathOf({ kind: "content", orgId: ORG, id: "p1" }),
        pathOf({ kind: "contentBySlug", orgId: ORG, slug: "p1" }),
      ].sort(),
    );
    const clean = path.join(fx.dir, "clean");
    await buildFixture(fx, { out: clean });
    expect(await hashTree(fx.out)).toBe(await hashTree(clean));
  });

  it("an edit reads and renders only the edited post and lists exactly the paths it changed", async () => {
    await buildFixture(fx);
    await writePost(fx.content, `${ORG}/p4.md`, postMeta("p4", { category: "news", publishedAt: "2026-01-05" }), "Rewritten.\n");
    const report = await buildFixture(fx);
    expect(report).toMatchObject({ postsParsed: 1, postsReused: 29, postsRendered: 1, changed: true });
    // Its excerpt, from the body, is in the list: item 23 (page 2) and item 7 of the news posts (their page 1).
    expect(report.changedPaths).toEqual({
      added: [],
      changed: [
        pathOf({ kind: "contents", orgId: ORG }),
        pathOf({ kind: "contentsPage", orgId: ORG, page: "2" }),
        pathOf({ kind: "categoryContentsPage", orgId: ORG, slug: "news", page: "1" }),
        pathOf({ kind: "content", orgId: ORG, id: "p4" }),
        pathOf({ kind: "contentBySlug", orgId: ORG, slug: "p4" }),
      ].sort(),
      removed: [],
    });
  });

  it("a touched file whose bytes are the same leaves the live generation as it was", async () => {
    await buildFixture(fx);
    const gen = (await liveGenerationOf(fx.out)).id;
    const before = await identitiesOf(fx.out);
    const file = path.join(fx.content, ORG, "p7.md");
    await utimes(file, new Date(), new Date(Date.now() + 5000));
    const report = await buildFixture(fx);
    // Read and hashed: the same bytes are the same post, neither parsed nor rendered again.
    expect(report).toMatchObject({ changed: false, postsParsed: 0, postsReused: 30, postsRendered: 0 });
    expect((await liveGenerationOf(fx.out)).id).toBe(gen);
    expect(await identitiesOf(fx.out)).toEqual(before);
  });

  it("a damaged build state costs a re-render, never a wrong or rewritten tree", async () => {
    await buildFixture(fx);
    const before = await identitiesOf(fx.out);
    const file = stateFileOf(treeStoreOf(fx.out));
    const bytes = await readFile(file);
    expect(bytes.length).toBeGreaterThan(4096);
    await writeFile(file, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const report = await buildFixture(fx);
    expect(report).toMatchObject({ postsParsed: 30, postsReused: 0, postsRendered: 30 });
    expect(report.orgs[0]).toMatchObject({ filesWritten: 0 });
    // Same bytes, same inodes and mtimes: a sync or CDN sees nothing to do.
    expect(await identitiesOf(fx.out)).toEqual(before);
    const again = await buildFixture(fx);
    expect(again).toMatchObject({ changed: false, postsParsed: 0, postsReused: 30, postsRendered: 0 });
  });

  it("a build state that cannot be read fails the build, naming the file, rather than being replaced as if damaged", async () => {
    await buildFixture(fx);
    const before = await identitiesOf(fx.out);
    const file = stateFileOf(treeStoreOf(fx.out));
    // A folder in its place fails every read with EISDIR (SQLITE_IOERR_READ), as a failing disk would; chmod would not stop root.
    await rm(file);
    await mkdir(file);
    await expect(buildFixture(fx)).rejects.toThrow(`the build state ${file} cannot be read (disk I/O error); nothing was built`);
    expect(await identitiesOf(fx.out)).toEqual(before);
  });

  it("a state a killed build left mid-commit (a hot journal) is rolled back by the next build, which trusts what was committed", async () => {
    await buildFixture(fx);
    const before = await identitiesOf(fx.out);
    const file = stateFileOf(treeStoreOf(fx.out));
    // A process killed with -9 inside the state's write transaction, as a build killed between its swap and its commit.
    const script = [
      `const db = new (require("better-sqlite3"))(${JSON.stringify(file)});`,
      `db.pragma("journal_mode = DELETE"); db.pragma("cache_size = 1");`,
      `db.exec("BEGIN IMMEDIATE"); db.prepare("UPDATE audit SET facts = 'torn'").run(); db.prepare("DELETE FROM files").run();`,
      `process.kill(process.pid, "SIGKILL");`,
    ].join("\n");
    const killed = spawnSync(process.execPath, ["-e", script], { cwd: REPO_ROOT });
    expect(killed.signal).toBe("SIGKILL");
    expect(existsSync(`${file}-journal`)).toBe(true);
    // serve --schedule reads the state read-only meanwhile: it cannot tell yet, and waits for the next build.
    const store = treeStoreOf(fx.out);
    expect(readNextPublishAt(store, await liveGenerationOf(fx.out))).toBeNull();
    const report = await buildFixture(fx);
    // Rolled back: the committed rows hold, so nothing is parsed or rendered again.
    expect(report).toMatchObject({ changed: false, postsParsed: 0, postsReused: 30, postsRendered: 0 });
    expect(existsSync(`${file}-journal`)).toBe(false);
    expect(await identitiesOf(fx.out)).toEqual(before);
    expect(readNextPublishAt(store, await liveGenerationOf(fx.out))).toEqual({ nextPublishAt: null });
  });

  it("records parsed by other code (an upgrade) are parsed again, once", async () => {
    await buildFixture(fx);
    const file = stateFileOf(treeStoreOf(fx.out));
    withDb(file, (db) => db.prepare("UPDATE orgs SET code = 'an older cdsnap'").run());
    expect(await buildFixture(fx)).toMatchObject({ changed: false, postsParsed: 30, postsReused: 0 });
    expect(await buildFixture(fx)).toMatchObject({ changed: false, postsParsed: 0, postsReused: 30 });
  });

  it("renaming a category re-renders exactly the posts in it", async () => {
    await buildFixture(fx);
    withDb(fx.db, (db) => db.prepare("UPDATE categories SET value = 'Howtos' WHERE org_id = ? AND id = 'c2'").run(ORG));
    const report = await buildFixture(fx);
    const inGuides = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 3 === 2).length;
    expect(report.postsParsed).toBe(0);
    expect(report.postsRendered).toBe(inGuides);
    const detail = JSON.parse(await readFile(path.join(fx.out, `api/organizations/${ORG}/contents/p2.json`), "utf8"));
    expect(detail.categoryName).toBe("Howtos");
  });

  it("--changed-paths writes the added, changed and removed API paths as JSON", async () => {
    await buildFixture(fx);
    await rm(path.join(fx.content, ORG, "p5.md"));
    await writePost(fx.content, `${ORG}/p99.md`, postMeta("p99"));
    const list = path.join(fx.dir, "changed.json");
    const result = await runCli([...buildArgs(fx, "--changed-paths", list)]);
    expect(result.code, result.stderr).toBe(0);
    const changed = JSON.parse(await readFile(list, "utf8"));
    expect(changed.added).toEqual(
      expect.arrayContaining([pathOf({ kind: "content", orgId: ORG, id: "p99" }), pathOf({ kind: "references", orgId: ORG, id: "p99" })]),
    );
    expect(changed.removed).toEqual(
      [
        pathOf({ kind: "content", orgId: ORG, id: "p5" }),
        pathOf({ kind: "contentBySlug", orgId: ORG, slug: "p5" }),
        pathOf({ kind: "references", orgId: ORG, id: "p5" }),
      ].sort(),
    );
    // p99 (dated the 10th) enters page 1 and p5 (the 6th) leaves page 2, of the list and of the guides.
    expect(changed.changed).toEqual(
      [
        pathOf({ kind: "contents", orgId: ORG }),
        pathOf({ kind: "contentsPage", orgId: ORG, page: "1" }),
        pathOf({ kind: "contentsPage", orgId: ORG, page: "2" }),
        pathOf({ kind: "categoryContentsPage", orgId: ORG, slug: "guides", page: "1" }),
      ].sort(),
    );
  });
});
