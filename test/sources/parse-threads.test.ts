import { mkdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleCliWith, bundleDirFor, bundleEntries, runBundle } from "../fixtures/cli.js";
import { type Fixture, makeFixture, removeDir } from "../fixtures/build-fixture.js";
import { insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree } from "../fixtures/tree.js";
import { REPO_ROOT } from "../fixtures/repo.js";
import { readIdentities } from "../../src/sources/read-text.js";

describe("parsing posts in worker threads", () => {
  let fx: Fixture;
  let bundleDir: string;
  beforeAll(async () => {
    fx = await makeFixture();
    withDb(fx.db, (db) => insertOrg(db, { id: "acme" }));
    for (let i = 0; i < 450; i++) {
      const meta = postMeta(`p${i}`, i % 50 === 0 ? { status: "draft" } : {});
      await writePost(fx.content, `acme/${i % 7}/p${i}.md`, meta, `# Post ${i}\n\nSome *text* with a [link](https://example.com/${i}).\n`);
    }
    await writePost(fx.content, "acme/broken.md", "---\nid: [unclosed\n---\nbody\n");
    bundleDir = await bundleCliWith("parse-worker", "sources/parse-worker.ts");
  });
  afterAll(async () => {
    await removeDir(fx.dir);
    await rm(bundleDir, { recursive: true, force: true });
  });

  it("two threads find the same problems and, once fixed, build the same tree as one", async () => {
    const cli = path.join(bundleDir, "cli.js");
    const args = (out: string) => ["build", "--db", fx.db, "--content", fx.content, "--out", out, "--json"];
    const one = await runBundle(cli, args(path.join(fx.dir, "one")), { CDSNAP_PARSE_THREADS: "1" });
    const two = await runBundle(cli, args(path.join(fx.dir, "two")), { CDSNAP_PARSE_THREADS: "2" });
    expect(one.code).toBe(1);
    expect(two.code).toBe(1);
    expect(two.stdout).toBe(one.stdout);
    const failure = JSON.parse(two.stdout) as { errors: { where: string; message: string }[] };
    expect(failure.errors).toEqual([
      expect.objectContaining({ where: expect.stringMatching(/^acme\/broken\.md:\d+$/), message: expect.stringMatching(/^front matter: /) }),
    ]);

    await writePost(fx.content, "acme/broken.md", postMeta("fixed"));
    const fixedOne = await runBundle(cli, args(path.join(fx.dir, "one")), { CDSNAP_PARSE_THREADS: "1" });
    const fixedTwo = await runBundle(cli, args(path.join(fx.dir, "two")), { CDSNAP_PARSE_THREADS: "2" });
    expect(JSON.parse(fixedOne.stdout)).toMatchObject({ parseThreads: 1, postsParsed: 451 });
    expect(JSON.parse(fixedTwo.stdout)).toMatchObject({ parseThreads: 2, postsParsed: 451 });
    expect(await hashTree(path.join(fx.dir, "two"))).toBe(await hashTree(path.join(fx.dir, "one")));
  });

  it("with the body budget spent and every record in the spool's file, the workers build the same tree", async () => {
    // The first body is refused: the parse worker is then told to send none, and each post's body is read again when it is rendered.
    const dir = await bundleEntries("spooled-build", { build: "test/fixtures/build-entry.ts", "parse-worker": "src/sources/parse-worker.ts", "render-worker": "src/emit/render-worker.ts" });
    try {
      const buildWith = async (out: string, budgets: object, threads: string) => {
        const options = { db: fx.db, content: fx.content, out: path.join(fx.dir, out), now: "2026-06-01T00:00:00Z", ...budgets };
        const run = await runBundle(path.join(dir, "build.js"), [JSON.stringify(options)], { CDSNAP_PARSE_THREADS: threads, CDSNAP_RENDER_THREADS: threads });
        expect(run.code, run.stderr).toBe(0);
        return JSON.parse(run.stdout) as { parseThreads: number; postsParsed: number };
      };
      expect(await buildWith("held", {}, "1")).toMatchObject({ parseThreads: 1 });
      expect(await buildWith("spooled", { bodyBudget: 1, recordsInMemory: 0 }, "2")).toMatchObject({ parseThreads: 2, postsParsed: 451 });
      expect(await hashTree(path.join(fx.dir, "spooled"))).toBe(await hashTree(path.join(fx.dir, "held")));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("hashing posts in worker threads", () => {
  let fx: Fixture;
  let bundleDir: string;
  beforeAll(async () => {
    fx = await makeFixture();
    await mkdir(path.join(fx.content, "acme"), { recursive: true });
    for (let i = 0; i < 700; i++) await writeFile(path.join(fx.content, "acme", `p${i}.md`), `post ${i}\n`.repeat(i % 40));
    // A folder the walk reads after acme/'s own posts, which a worker hashes by then.
    await mkdir(path.join(fx.content, "acme", "later"));
    await writeFile(path.join(fx.content, "acme", "later", "q.md"), "post q\n");
    await writeFile(path.join(fx.dir, "outside.md"), "not a post\n");
    await symlink(path.join(fx.dir, "outside.md"), path.join(fx.content, "acme", "outside.md"));
    const { build } = await import("esbuild");
    bundleDir = await bundleDirFor("hash");
    await build({
      entryPoints: {
        pool: path.join(REPO_ROOT, "src/sources/parse-pool.ts"),
        "parse-worker": path.join(REPO_ROOT, "src/sources/parse-worker.ts"),
        "read-posts": path.join(REPO_ROOT, "src/sources/read-posts.ts"),
      },
      bundle: true,
      platform: "node",
      target: "node20",
      format: "esm",
      packages: "external",
      outdir: bundleDir,
      logLevel: "warning",
      absWorkingDir: REPO_ROOT,
    });
  });
  afterAll(async () => {
    await removeDir(fx.dir);
    await rm(bundleDir, { recursive: true, force: true });
  });

  it("files handed over in parts, a worker and this thread hash each as one thread does, with null where a file cannot be read", async () => {
    const pool = (await import(path.join(bundleDir, "pool.js"))) as typeof import("../../src/sources/parse-pool.js");
    const rels = [...Array.from({ length: 700 }, (_, i) => `acme/p${i}.md`), "acme/outside.md", "acme/gone.md"];
    const realRoot = await realpath(fx.content);
    const before = process.env.CDSNAP_PARSE_THREADS;
    process.env.CDSNAP_PARSE_THREADS = "2";
    try {
      const queue = pool.hashingQueue(fx.content, realRoot, pool.HASH_WORKER_POSTS, 1);
      // As a walk hands them over: a folder at a time, with pauses between.
      for (let start = 0; start < rels.length; start += 90) {
        queue.add(rels.slice(start, start + 90));
        await queue.pause();
      }
      const shared = await queue.identities();
      const alone = readIdentities(realRoot, fx.content, rels);
      expect(shared).toEqual(alone);
      expect(alone.slice(-2)).toEqual([null, null]);
      expect(alone.filter((identity) => identity !== null)).toHaveLength(700);
    } finally {
      if (before === undefined) delete process.env.CDSNAP_PARSE_THREADS;
      else process.env.CDSNAP_PARSE_THREADS = before;
    }
  });

  it("a walk that fails while a worker hashes stops the worker: the build's process ends with the error", async () => {
    // The previous build as readPosts is handed it: 30,000 posts recorded, every file with another fingerprint, and a
    // state that cannot be read once the walk reaches acme/later/.
    const script = path.join(bundleDir, "failing-walk.mjs");
    await writeFile(
      script,
      `import { readPosts } from "./read-posts.js";
const listing = { fingerprints: "", content: "", folders: new Map([["acme", { fingerprints: "", content: "", count: 30000 }]]) };
const previous = {
  candidates: ["acme"],
  listing: () => listing,
  identity: (rel) => {
    if (rel.startsWith("acme/later/")) throw new Error("the build state cannot be read");
    return { fingerprint: "recorded", sha256: "recorded" };
  },
  heads: () => new Map(),
  record: () => undefined,
};
await readPosts(process.argv[2], undefined, { previous }).then(
  () => console.log("read"),
  (error) => console.log(error.message),
);
`,
    );
    const run = await runBundle(script, [fx.content], { CDSNAP_PARSE_THREADS: "2" });
    expect(run).toMatchObject({ code: 0, stdout: "the build state cannot be read\n" });
  });
});
