/**
 * `cdsnap dev` when its first build fails: with no tree from an earlier build
 * it says plainly that nothing is served, does not listen, and starts serving
 * with the first build that succeeds; with an earlier tree it serves that one.
 */
import type { ChildProcess } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { freePort } from "../fixtures/http.js";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { buildFixture, fixturesRemovedAfterEach, type Fixture } from "../fixtures/build-fixture.js";
import { cliPath, spawnCli } from "../fixtures/cli.js";
import { pollUntil } from "../fixtures/wait.js";

const { fixture } = fixturesRemovedAfterEach();

beforeAll(async () => {
  await cliPath();
});

interface DevProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

let running: DevProcess | undefined;
afterEach(async () => {
  if (running && running.child.exitCode === null && running.child.signalCode === null) {
    running.child.kill("SIGTERM");
    await running.exited;
  }
  running = undefined;
});

async function startDev(fx: Fixture, port: number): Promise<DevProcess> {
  const child = await spawnCli(["dev", "--db", fx.db, "--content", fx.content, "--out", fx.out, "--port", String(port)]);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  running = { child, stdout: () => out, stderr: () => err, exited };
  return running;
}

async function waitFor(what: string, check: () => boolean, dev: DevProcess): Promise<void> {
  const seen = await pollUntil(async () => check(), 20_000);
  expect(seen, `${what}\n--- stdout:\n${dev.stdout()}\n--- stderr:\n${dev.stderr()}`).toBe(true);
}

const POST = "demo/guides/aeropress-recipes.md";
const postUrl = (port: number) => `http://127.0.0.1:${port}/api/organizations/demo/contents/by-slug/aeropress-recipes`;

async function refusesConnections(port: number): Promise<boolean> {
  return fetch(postUrl(port)).then(
    () => false,
    (error: Error & { cause?: { code?: string } }) => error.cause?.code === "ECONNREFUSED",
  );
}

describe("cdsnap dev whose first build fails", () => {
  test("with no tree yet: says nothing is served, does not listen, and serves once a save fixes the sources", async () => {
    const fx = await fixture({ demo: true });
    const file = path.join(fx.content, POST);
    const good = await readFile(file, "utf8");
    await writeFile(file, good.replace(/^title: .*$/m, "title: Note: a colon"));
    const port = await freePort();
    const dev = await startDev(fx, port);

    await waitFor("the failure is printed", () => dev.stderr().includes("nothing is served yet"), dev);
    expect(dev.stderr()).toContain(`${POST}:3: front matter: a value containing ': ' must be quoted: title: "Note: a colon"`);
    expect(dev.stderr()).toContain(
      `nothing is served yet: there is no tree to serve until a build succeeds; fix the sources and save, ` +
        `and cdsnap dev starts listening on 127.0.0.1:${port}`,
    );
    expect(dev.stderr()).not.toContain("still serving");
    expect(dev.stdout()).not.toContain("cdsnap dev serving");
    expect(await refusesConnections(port)).toBe(true);

    await writeFile(file, good);
    await waitFor("it starts serving", () => dev.stdout().includes(`cdsnap dev serving http://127.0.0.1:${port};`), dev);
    const res = await fetch(postUrl(port), { headers: { "x-api-key": DEMO_READ_KEY } });
    expect(res.status).toBe(200);

    dev.child.kill("SIGTERM");
    expect(await dev.exited).toBe(0);
  });

  test("with a tree from an earlier build: serves it at once, and says so", async () => {
    const fx = await fixture({ demo: true });
    await buildFixture(fx);
    const file = path.join(fx.content, POST);
    await writeFile(file, (await readFile(file, "utf8")).replace(/^title: .*$/m, "title: Note: a colon"));
    const port = await freePort();
    const dev = await startDev(fx, port);

    await waitFor("it serves", () => dev.stdout().includes(`cdsnap dev serving http://127.0.0.1:${port};`), dev);
    expect(dev.stderr()).toContain("still serving the last good tree; fix the sources and save to rebuild");
    expect(dev.stderr()).not.toContain("nothing is served");
    expect((await fetch(postUrl(port), { headers: { "x-api-key": DEMO_READ_KEY } })).status).toBe(200);
  });
});
