/**
 * `serve`, `dev` and `demo` (what `npm start` runs) on an address they cannot
 * have: a usage error (exit 2) naming the address and the way to choose
 * another, never "unexpected error … report it" and never a stack.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { buildFixture, fixturesRemovedAfterEach, type Fixture } from "../fixtures/build-fixture.js";
import { cliPath, runCli } from "../fixtures/cli.js";
import { post } from "../fixtures/posts.js";
import { DEMO_CONTENT } from "../fixtures/repo.js";

const { orgFixture, fixture } = fixturesRemovedAfterEach();

beforeAll(async () => {
  await cliPath();
});

let held: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (held ? held.close(() => resolve()) : resolve()));
  held = undefined;
});

/** A port on 127.0.0.1 that a real listener holds until the test ends. */
async function holdPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  held = server;
  return (server.address() as { port: number }).port;
}

/** Whether this user is refused a port below 1024 (root, or a system letting everyone have them, is not). */
async function lowPortsRefused(): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "EACCES"));
    probe.listen(81, "127.0.0.1", () => probe.close(() => resolve(false)));
  });
}

const LOW_PORTS_REFUSED = await lowPortsRefused();

function expectUsageError(run: { code: number | null; stderr: string }, message: string): void {
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).toContain(`cdsnap: ${message}\n`);
  expect(run.stderr).not.toContain("unexpected error");
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

const BUSY = (port: number) =>
  `cannot listen on 127.0.0.1:${port}: another program is using this port; stop it, or choose another port with --port <n> or CDSNAP_PORT (0 picks a free one)`;

const serveArgs = (fx: Fixture, ...extra: string[]) => ["serve", "--db", fx.db, "--content", fx.content, "--out", fx.out, ...extra];
const devArgs = (fx: Fixture, ...extra: string[]) => ["dev", "--db", fx.db, "--content", fx.content, "--out", fx.out, ...extra];

describe("a port another program holds", () => {
  test("cdsnap serve, from --port or CDSNAP_PORT", async () => {
    const fx = await orgFixture();
    await buildFixture(fx);
    const port = await holdPort();
    expectUsageError(await runCli(serveArgs(fx, "--port", String(port))), BUSY(port));
    expectUsageError(await runCli(serveArgs(fx), { env: { CDSNAP_PORT: String(port) } }), BUSY(port));
  });

  test("cdsnap dev, after a first build that succeeds", async () => {
    const fx = await orgFixture();
    const port = await holdPort();
    expectUsageError(await runCli(devArgs(fx, "--port", String(port))), BUSY(port));
  });

  test("cdsnap dev with broken sources and no tree says so at once, not once the sources are fixed", async () => {
    const fx = await orgFixture();
    await mkdir(path.join(fx.content, "acme"));
    await writeFile(path.join(fx.content, "acme", "a.md"), post("a", ["tags: [a, b"]));
    const port = await holdPort();
    const run = await runCli(devArgs(fx, "--port", String(port)));
    expect(run.stderr).toContain("build failed");
    expectUsageError(run, BUSY(port));
  });

  test("cdsnap demo (npm start passes no flags): CDSNAP_PORT is named first", async () => {
    const fx = await fixture();
    const port = await holdPort();
    const run = await runCli(["demo", "--dir", path.join(fx.dir, "demo"), "--content", DEMO_CONTENT], {
      env: { CDSNAP_PORT: String(port) },
    });
    expectUsageError(
      run,
      `cannot listen on 127.0.0.1:${port}: another program is using this port; stop it, or choose another port with ` +
        "CDSNAP_PORT (e.g. CDSNAP_PORT=8788 npm start) or --port <n> (0 picks a free one)",
    );
  });
});

describe("other addresses it cannot have", () => {
  test("an address this machine does not have names --host", async () => {
    const fx = await orgFixture();
    await buildFixture(fx);
    // 192.0.2.0/24 is reserved for documentation: no machine has it.
    expectUsageError(
      await runCli(serveArgs(fx, "--host", "192.0.2.1", "--port", "8787")),
      "cannot listen on 192.0.2.1:8787: this machine has no such address; choose one of its own with --host or CDSNAP_HOST " +
        "(127.0.0.1 for this machine only, 0.0.0.0 for every network)",
    );
  });

  test.runIf(LOW_PORTS_REFUSED)("a port below 1024 for a user who may not have it", async () => {
    const fx = await orgFixture();
    await buildFixture(fx);
    expectUsageError(
      await runCli(serveArgs(fx, "--port", "81")),
      "cannot listen on 127.0.0.1:81: this user may not use port 81 (ports below 1024 need administrator rights); " +
        "choose a port from 1024 up with --port <n> or CDSNAP_PORT",
    );
  });

  test("a port that is not a port is refused before anything starts", async () => {
    const fx = await orgFixture();
    for (const args of [serveArgs(fx, "--port", "http"), devArgs(fx, "--port", "70000")]) {
      const run = await runCli(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("--port must be a whole number from 0 to 65535");
    }
    const demo = await runCli(["demo", "--dir", path.join(fx.dir, "demo")], { env: { CDSNAP_PORT: "eighty" } });
    expect(demo.code).toBe(2);
    expect(demo.stderr).toContain("--port must be a whole number from 0 to 65535");
  });
});
