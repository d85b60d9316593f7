/**
 * The benchmark's generator: deterministic, and what it writes is an
 * organization `cdsnap build` accepts (a real build of the bundled CLI).
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { makeFloorPlan } from "../../bench/floor-plan.js";
import { generateOrg, generateOrgs } from "../../bench/generate.js";
import { runCli } from "../fixtures/cli.js";

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-bench-test-"));
  temps.push(dir);
  return dir;
}

/** Every file under `root` as relative path -> bytes. */
async function readTree(root: string): Promise<Map<string, Buffer>> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files = new Map<string, Buffer>();
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files.set(path.relative(root, file), await readFile(file));
  }
  return files;
}

test("the same seed generates byte-identical posts", async () => {
  const [a, b] = [await tempDir(), await tempDir()];
  const orgA = generateOrg({ dir: a, orgId: "bench", posts: 30, seed: 7 });
  const orgB = generateOrg({ dir: b, orgId: "bench", posts: 30, seed: 7 });

  const treeA = await readTree(orgA.content);
  const treeB = await readTree(orgB.content);
  expect(treeA.size).toBe(30);
  expect([...treeB.keys()].sort()).toEqual([...treeA.keys()].sort());
  for (const [file, bytes] of treeA) expect(bytes.equals(treeB.get(file)!), file).toBe(true);
  expect(orgB.writeKey).toBe(orgA.writeKey);
  expect(orgB.statusCounts).toEqual(orgA.statusCounts);
});

test("cdsnap build accepts a generated organization and publishes its posts", async () => {
  const dir = await tempDir();
  const org = generateOrg({ dir, orgId: "bench", posts: 30, seed: 7 });

  const result = await runCli(["build", "--db", org.db, "--content", org.content, "--out", path.join(dir, "site"), "--json"]);
  expect(result.code, result.stderr).toBe(0);
  const report = JSON.parse(result.stdout) as { orgs: { orgId: string; postsPublished: number; blocksPublished: number }[] };
  const bench = report.orgs.find((o) => o.orgId === "bench");
  expect(bench?.postsPublished).toBe(org.statusCounts.published);
  expect(bench?.postsPublished).toBeGreaterThan(0);
  expect(bench?.blocksPublished).toBeGreaterThan(1000);
}, 120_000);

test("many organizations share one database, each with its own posts and keys", async () => {
  const [a, b] = [await tempDir(), await tempDir()];
  const options = { orgs: 3, postsPerOrg: 4, blocksPerOrg: 5, seed: 7 };
  const corpusA = generateOrgs({ dir: a, ...options });
  const corpusB = generateOrgs({ dir: b, ...options });

  expect(corpusA.orgs.map((o) => o.orgId)).toEqual(["org-1", "org-2", "org-3"]);
  const treeA = await readTree(corpusA.content);
  const treeB = await readTree(corpusB.content);
  expect(treeA.size).toBe(12);
  for (const [file, bytes] of treeA) expect(bytes.equals(treeB.get(file)!), file).toBe(true);
  for (const { orgId, samplePublished } of corpusA.orgs) {
    expect([...treeA.keys()].filter((file) => file.startsWith(`${orgId}${path.sep}`))).toHaveLength(4);
    expect(samplePublished.relPath.startsWith(`${orgId}/`)).toBe(true);
  }
  expect(new Set(corpusA.orgs.map((o) => o.samplePublished.id)).size).toBe(3);
});

test("cdsnap build accepts the many-organizations corpus, --org rebuilds one, and the floor plan covers the whole tree", async () => {
  const dir = await tempDir();
  const corpus = generateOrgs({ dir, orgs: 3, postsPerOrg: 4, blocksPerOrg: 5, seed: 7 });
  const out = path.join(dir, "site", "out");

  const full = await runCli(["build", "--db", corpus.db, "--content", corpus.content, "--out", out, "--json"]);
  expect(full.code, full.stderr).toBe(0);
  const report = JSON.parse(full.stdout) as { orgs: { orgId: string; postsPublished: number; blocksPublished: number }[] };
  expect(report.orgs.map((o) => o.orgId)).toEqual(corpus.orgs.map((o) => o.orgId));
  expect(report.orgs.reduce((sum, o) => sum + o.postsPublished, 0)).toBe(corpus.statusCounts.published);

  const plan = await makeFloorPlan(corpus.content, corpus.db, out);
  expect(plan.sources).toHaveLength(1 + corpus.posts);
  const perOrg = (orgId: string) => plan.outputs.filter(([rel]) => rel.includes(`/organizations/${orgId}/`)).length;
  for (const { orgId } of corpus.orgs) expect(perOrg(orgId), orgId).toBeGreaterThan(0);

  const { orgId } = corpus.orgs[1]!;
  const one = await runCli(["build", "--db", corpus.db, "--content", corpus.content, "--out", out, "--json", "--org", orgId]);
  expect(one.code, one.stderr).toBe(0);
  expect((JSON.parse(one.stdout) as { orgs: { orgId: string }[] }).orgs.map((o) => o.orgId)).toEqual([orgId]);
}, 120_000);
