/**
 * `cdsnap serve` where there is nothing to serve: it refuses to start (exit 2)
 * and says how to publish a tree, rather than answering 404 to everything. A
 * tree with no organization in it is a tree.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { treeStoreOf } from "../../src/emit/tree-store.js";
import { buildFixture, fixturesRemovedAfterEach, type Fixture } from "../fixtures/build-fixture.js";
import { cliPath, runCli } from "../fixtures/cli.js";
import { startCliServer, stopCliServer } from "../fixtures/served-site.js";
import { pathExists } from "../fixtures/tree.js";

const { fixture, orgFixture } = fixturesRemovedAfterEach();

beforeAll(async () => {
  await cliPath();
});

const serveArgs = (fx: Fixture) => ["serve", "--db", fx.db, "--content", fx.content, "--out", fx.out, "--port", "0"];
const howToBuild = (fx: Fixture) => `make one with: cdsnap build --db ${fx.db} --content <folder of posts> --out ${fx.out}`;

/** Runs `cdsnap serve` on a fixture that has no tree, expecting the refusal. */
async function refusal(fx: Fixture): Promise<string> {
  const run = await runCli(serveArgs(fx));
  expect(run.code, run.stderr).toBe(2);
  expect(run.stdout).toBe("");
  expect(run.stderr).not.toMatch(/\n\s+at /); // no stack
  return run.stderr.trimEnd();
}

describe("cdsnap serve without a published tree", () => {
  test("before the first build: refuses, names the folder and the build command, and creates nothing", async () => {
    const fx = await orgFixture();
    expect(await refusal(fx)).toBe(`cdsnap: there is no published tree at ${fx.out}: nothing is there yet; ${howToBuild(fx)}`);
    expect(await pathExists(fx.out)).toBe(false);
    expect(await pathExists(treeStoreOf(fx.out).stateDir)).toBe(false);
  });

  test("an empty folder is no tree either", async () => {
    const fx = await orgFixture();
    await mkdir(fx.out);
    expect(await refusal(fx)).toBe(`cdsnap: there is no published tree at ${fx.out}: it is an empty folder; ${howToBuild(fx)}`);
  });

  test("a folder cdsnap did not make: move it away first (a build would refuse it too)", async () => {
    const fx = await orgFixture();
    await mkdir(path.join(fx.out, "api"), { recursive: true });
    await writeFile(path.join(fx.out, "index.html"), "<p>hand made</p>");
    expect(await refusal(fx)).toBe(
      `cdsnap: there is no published tree at ${fx.out}: it is a folder cdsnap did not make (a build makes --out a link to its tree); ` +
        `move it away or choose another --out, then ${howToBuild(fx)}`,
    );
  });

  test("a link to a generation that is gone", async () => {
    const fx = await orgFixture();
    await symlink(".site.cdsnap/gens/000004/tree", fx.out);
    expect(await refusal(fx)).toBe(
      `cdsnap: there is no published tree at ${fx.out}: it links to .site.cdsnap/gens/000004/tree, which is gone; ${howToBuild(fx)}`,
    );
  });

  test("a built tree with no organization in it is served", async () => {
    const fx = await fixture();
    await buildFixture(fx);
    const cli = await startCliServer({ ...fx, stateDir: treeStoreOf(fx.out).stateDir });
    try {
      expect((await fetch(`${cli.url}/api/organizations/acme/organization`)).status).toBe(401);
    } finally {
      await stopCliServer(cli);
    }
  });
});
