/**
 * bench/fused-pipeline.ts measures a build's per-post work laid out in the
 * thread that reads each post: its figures mean something only if it does the
 * build's work. On a generated organization, bundled as dist/bench/ is, with a
 * worker and without: every file it writes is the build's file at that path,
 * byte for byte, one for each of a published post's files, and every post and
 * file has its row in the state it streams.
 */
import Database from "better-sqlite3";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateOrg, type GeneratedOrg } from "../../bench/generate.js";
import { bundleEntries, runBundle, runCli } from "../fixtures/cli.js";

const POSTS = 60;

describe("the fused pipeline measurement", () => {
  let dir: string;
  let bundleDir: string;
  let org: GeneratedOrg;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-fused-test-"));
    org = generateOrg({ dir, orgId: "bench", posts: POSTS, seed: 11 });
    const built = await runCli(["build", "--db", org.db, "--content", org.content, "--out", path.join(dir, "site"), "--quiet"]);
    expect(built.code, built.stderr).toBe(0);
    bundleDir = await bundleEntries("fused-pipeline", { "fused-pipeline": "bench/fused-pipeline.ts" });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(bundleDir, { recursive: true, force: true });
  });

  it.each([1, 2])("on %i thread(s), writes the build's bytes for every published post and a state row for each", async (threads) => {
    const tree = path.join(dir, `fused-${threads}`);
    const run = await runBundle(path.join(bundleDir, "fused-pipeline.js"), [org.content, org.db, tree, String(threads)], {});
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { posts: number; files: number; threads: number };
    expect(report).toMatchObject({ posts: POSTS, threads });

    const written = (await readdir(tree, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    const published = org.statusCounts.published;
    expect(published).toBeGreaterThan(0);
    expect(written).toHaveLength(3 * published);
    expect(report.files).toBe(3 * published);
    for (const entry of written) {
      const rel = path.relative(tree, path.join(entry.parentPath, entry.name));
      const mine = await readFile(path.join(tree, rel));
      const builds = await readFile(path.join(dir, "site", rel));
      expect(mine.equals(builds), rel).toBe(true);
    }

    const state = new Database(`${tree}.state.sqlite`, { readonly: true });
    try {
      expect(state.prepare("SELECT count(*) FROM posts").pluck().get()).toBe(POSTS);
      expect(state.prepare("SELECT count(*) FROM posts WHERE record IS NOT NULL").pluck().get()).toBe(published);
      expect(state.prepare("SELECT count(*) FROM files WHERE facts LIKE '{\"problems\":[]%'").pluck().get()).toBe(3 * published);
    } finally {
      state.close();
    }
  });
});
