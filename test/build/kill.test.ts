/**
 * A build killed with SIGKILL at any moment leaves the published tree exactly
 * as it was (the swap is one rename), and the next build succeeds.
 */
import { readFile, readdir, readlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { buildFixture, type Fixture, makeFixture, removeDir } from "../fixtures/build-fixture.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree, listFiles, stateDirOf } from "../fixtures/tree.js";
import { buildArgs, cliPath, runCli, spawnCli } from "../fixtures/cli.js";

const BULK_POSTS = 1500;
let fx: Fixture;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const BODY = [
  "## A roast log",
  "",
  "We charged the drum at 200 °C and watched the **colour** change from green to yellow [1].",
  "First crack came at nine minutes; we dropped the batch ninety seconds later.",
  "",
  "- Charge: 200 °C",
  "- First crack: 9:00",
  "- Drop: 10:30",
  "",
  "Cupping notes follow next week, with the *whole* team around the table.",
  "",
].join("\n");

beforeAll(async () => {
  await cliPath();
  fx = await makeFixture({ demo: true });
  await buildFixture(fx);
  // Many posts, so that the next build reads, renders and writes long enough to be killed midway.
  const jobs: Promise<unknown>[] = [];
  for (let n = 0; n < BULK_POSTS; n++) {
    const id = `bulk-${String(n).padStart(5, "0")}`;
    // A given excerpt keeps rendering cheap: the time goes to reading and writing files.
    const meta = postMeta(id, { publishedAt: "2024-01-01", tags: ["bulk"], category: "news", excerpt: "A bulk post." });
    jobs.push(writePost(fx.content, `demo/bulk/${id}.md`, meta, BODY));
  }
  await Promise.all(jobs);
}, 120_000);

afterAll(async () => {
  await removeDir(fx.dir);
});

async function gensNames(): Promise<string[]> {
  return readdir(path.join(stateDirOf(fx.out), "gens")).catch(() => []);
}

/** Starts a CLI build, polls until `ready(msSinceStart)` or the child exits, then SIGKILLs it. Returns how it ended. */
async function killWhen(ready: (elapsedMs: number) => Promise<boolean>): Promise<NodeJS.Signals | number | null> {
  const child = await spawnCli(buildArgs(fx));
  const start = Date.now();
  child.stdout?.resume();
  child.stderr?.resume();
  let exited = false;
  const ended = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on("exit", (code, signal) => {
      exited = true;
      resolve(signal ?? code);
    }),
  );
  while (!exited && !(await ready(Date.now() - start))) await sleep(2);
  if (!exited) child.kill("SIGKILL");
  return ended;
}

async function everyFileParses(): Promise<void> {
  for (const rel of await listFiles(fx.out)) {
    const text = await readFile(path.join(fx.out, rel), "utf8");
    expect(() => JSON.parse(text), rel).not.toThrow();
  }
}

// Four builds of 1500 posts: a generous limit, for a loaded two-core machine.
test("a build killed midway leaves the live tree byte-identical, and the next build succeeds", { timeout: 180_000 }, async () => {
  const liveHash = await hashTree(fx.out);
  const liveLink = await readlink(fx.out);
  const liveGens = await gensNames();
  const newGen = async () => (await gensNames()).some((g) => !liveGens.includes(g));
  const newGenHasFiles = async (min: number) => {
    for (const g of (await gensNames()).filter((name) => !liveGens.includes(name))) {
      // Only files land in by-slug/ (folders are all made before the first file is written).
      const dir = path.join(stateDirOf(fx.out), "gens", g, "tree/api/organizations/demo/contents/by-slug");
      const entries = await readdir(dir).catch(() => []);
      if (entries.length >= min) return true;
    }
    return false;
  };
  const kills: ((elapsedMs: number) => Promise<boolean>)[] = [
    async (ms) => ms >= 150, // while starting, reading and rendering
    newGen, // as soon as the next generation's folder appears
    () => newGenHasFiles(500), // a third of the way through writing the next generation's files
  ];
  for (const ready of kills) {
    const ended = await killWhen(ready);
    expect(ended).toBe("SIGKILL");
    expect(await readlink(fx.out)).toBe(liveLink);
    expect(await hashTree(fx.out)).toBe(liveHash);
    await everyFileParses();
  }

  const next = await runCli(buildArgs(fx, "--json"));
  expect(next.stderr).toBe("");
  expect(next.code).toBe(0);
  const report = JSON.parse(next.stdout) as { orgs: { orgId: string; postsPublished: number }[] };
  expect(report.orgs.find((o) => o.orgId === "demo")?.postsPublished).toBeGreaterThan(BULK_POSTS);
  expect(await readlink(fx.out)).not.toBe(liveLink);
  await everyFileParses();
  // The half-written generations of the killed builds are gone.
  expect((await gensNames()).length).toBeLessThanOrEqual(2);
});
