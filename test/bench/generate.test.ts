/**
 * The benchmark's generator: deterministic, and what it writes is an
 * organization `cdsnap build` accepts (a real build of the bundled CLI).
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { generateOrg } from "../../bench/generate.js";
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
