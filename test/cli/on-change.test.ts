/**
 * `--on-change` (and CDSNAP_ON_CHANGE) on `serve`, `build` and `dev`, as a
 * user runs them: the command gets the change on stdin, and whatever it does
 * -- block, fail, hang -- a PATCH is answered and a build keeps its exit code.
 * A hook blocked on a named pipe is known to be running while the test looks.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { treeStoreOf } from "../../src/emit/tree-store.js";
import { buildFixture, fixturesRemovedAfterEach, type Fixture } from "../fixtures/build-fixture.js";
import { buildArgs, cliPath, runCli, spawnCli } from "../fixtures/cli.js";
import { withDb } from "../fixtures/database.js";
import { makeGate, openGate, recordedRuns, recordingHook, untilRecorded } from "../fixtures/hook.js";
import { api, call, patchJson } from "../fixtures/http.js";
import { startCliServer, stopCliServer, type CliServer } from "../fixtures/served-site.js";
import { pathExists } from "../fixtures/tree.js";
import { pollUntil } from "../fixtures/wait.js";

const { fixture } = fixturesRemovedAfterEach();

beforeAll(async () => {
  await cliPath();
});

let server: CliServer | undefined;
afterEach(async () => {
  await stopCliServer(server);
  server = undefined;
});

const DESCRIPTION = api("demo", "business-description");
const siteOf = (fx: Fixture) => ({ ...fx, stateDir: treeStoreOf(fx.out).stateDir });

/** The server's JSON log lines about on-change runs. */
const hookLines = (server: CliServer) =>
  server
    .stdout()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === "on-change");

async function description(url: string): Promise<string> {
  const res = await call(url, api("demo", "organization"), { key: DEMO_READ_KEY });
  return ((await res.json()) as { businessDescription: string }).businessDescription;
}

describe("serve --on-change", () => {
  test("a PATCH is answered, and read back, while its hook is still running; the run is logged when it ends", async () => {
    const fx = await fixture({ demo: true });
    await buildFixture(fx);
    const gate = makeGate(path.join(fx.dir, "gate"));
    const hook = recordingHook(fx.dir, { gate });
    server = await startCliServer(siteOf(fx), ["--on-change", hook.command]);

    const res = await patchJson(server.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Fresh beans." });
    expect(res.status).toBe(200);
    const [event] = await untilRecorded(hook.runs, 1);
    expect(event).toMatchObject({ event: "patch", paths: ["/api/organizations/demo/organization"], tags: ["organization:demo"] });
    // The hook is still at the gate, and the origin already serves the new value.
    expect(await description(server.url)).toBe("Fresh beans.");
    expect(hookLines(server)).toEqual([]);

    await openGate(gate);
    await pollUntil(async () => hookLines(server!).length === 1, 10_000);
    expect(hookLines(server)).toEqual([expect.objectContaining({ event: "patch", status: "ok", exitCode: 0, merged: 1, paths: 1, tags: 1 })]);
  });

  test("CDSNAP_ON_CHANGE: a failing hook leaves the PATCH answered, and logs an error line with its stderr", async () => {
    const fx = await fixture({ demo: true });
    await buildFixture(fx);
    const hook = recordingHook(fx.dir, { exit: 22, stderr: "curl: (22) The requested URL returned error: 403" });
    server = await startCliServer(siteOf(fx), [], { CDSNAP_ON_CHANGE: hook.command });
    const res = await patchJson(server.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Still answered." });
    expect(res.status).toBe(200);
    await pollUntil(async () => hookLines(server!).length === 1, 10_000);
    expect(hookLines(server)).toEqual([
      expect.objectContaining({
        level: "error",
        event: "patch",
        status: "failed",
        exitCode: 22,
        stderr: "curl: (22) The requested URL returned error: 403\n",
      }),
    ]);
  });

  test("a stop waits for the run of the last PATCH", async () => {
    const fx = await fixture({ demo: true });
    await buildFixture(fx);
    const gate = makeGate(path.join(fx.dir, "gate"));
    const hook = recordingHook(fx.dir, { gate });
    server = await startCliServer(siteOf(fx), ["--on-change", hook.command]);
    expect((await patchJson(server.url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "Last words." })).status).toBe(200);
    await untilRecorded(hook.runs, 1);
    server.child.kill("SIGTERM");
    await openGate(gate);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(hookLines(server)).toEqual([expect.objectContaining({ status: "ok" })]);
  });
});

describe("build --on-change", () => {
  test("the hook gets the build's paths and tags; its failure is reported and the exit code stays 0", async () => {
    const fx = await fixture({ demo: true });
    // Both builds by the CLI, at the same clock: the edit is the only difference.
    expect((await runCli(buildArgs(fx, "--quiet"))).code).toBe(0);
    const post = path.join(fx.content, "demo/guides/aeropress-recipes.md");
    await writeFile(post, (await readFile(post, "utf8")).replace(/^title: .*$/m, "title: AeroPress, revisited"));
    const hook = recordingHook(fx.dir, { exit: 1, stderr: "purge failed" });
    const run = await runCli(buildArgs(fx, "--quiet", "--on-change", hook.command));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^on-change \(build: 5 paths, 4 tags\) failed \(exit 1\) after \d+ ms: purge failed\n$/);
    expect(recordedRuns(hook.runs)).toEqual([
      expect.objectContaining({
        event: "build",
        merged: 1,
        orgs: ["demo"],
        // The post, the list, and page 1 of the list and of its category (brewing), which hold it.
        paths: [
          "/api/organizations/demo/categories/brewing/contents/page/1",
          "/api/organizations/demo/contents",
          "/api/organizations/demo/contents/by-slug/aeropress-recipes",
          "/api/organizations/demo/contents/page/1",
          "/api/organizations/demo/contents/post-0011",
        ],
        tags: ["categoryContentsPage:demo/brewing/1", "content:demo/post-0011", "contents:demo", "contentsPage:demo/1"],
      }),
    ]);
  });

  test("the build waits for its hook, and kills one that outlives --on-change-timeout; a build with no change runs none", async () => {
    const fx = await fixture({ demo: true });
    const done = path.join(fx.dir, "done");
    const slow = `cat > /dev/null; sleep 1; touch '${done}'`;
    const first = await runCli(buildArgs(fx, "--quiet", "--on-change", slow));
    expect(first.code, first.stderr).toBe(0);
    expect(await pathExists(done)).toBe(true);

    withDb(fx.db, (db) => db.prepare("UPDATE organizations SET business_description = 'Changed for the build' WHERE id = 'demo'").run());
    const hung = await runCli(buildArgs(fx, "--json", "--on-change", "cat > /dev/null; sleep 600", "--on-change-timeout", "1"));
    expect(hung.code, hung.stderr).toBe(0);
    expect(JSON.parse(hung.stdout)).toMatchObject({ ok: true, changedTags: ["organization:demo"] });
    expect(hung.stderr).toMatch(/^on-change \(build: 1 paths, 1 tags\) was killed after \d+ ms \(timeout\)\n$/);

    const hook = recordingHook(fx.dir);
    const same = await runCli(buildArgs(fx, "--on-change", hook.command));
    expect(same.code, same.stderr).toBe(0);
    expect(recordedRuns(hook.runs)).toEqual([]);
  });

  test("a build that fails runs no hook", async () => {
    const fx = await fixture({ demo: true });
    const post = path.join(fx.content, "demo/guides/aeropress-recipes.md");
    await writeFile(post, (await readFile(post, "utf8")).replace(/^title: .*$/m, "title: Note: a colon"));
    const hook = recordingHook(fx.dir);
    const run = await runCli(buildArgs(fx, "--on-change", hook.command));
    expect(run.code).toBe(1);
    expect(recordedRuns(hook.runs)).toEqual([]);
  });

  test("--on-change-timeout takes whole seconds from 1", async () => {
    const fx = await fixture({ demo: true });
    const run = await runCli(buildArgs(fx, "--on-change", "true", "--on-change-timeout", "0"));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--on-change-timeout must be a whole number from 1 to 3600");
  });
});

describe("dev --on-change", () => {
  test("each build's change, and each PATCH's", async () => {
    const fx = await fixture({ demo: true });
    const hook = recordingHook(fx.dir);
    const child = await spawnCli(["dev", "--db", fx.db, "--content", fx.content, "--out", fx.out, "--port", "0", "--on-change", hook.command]);
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    const exited = new Promise((resolve) => child.on("exit", resolve));
    try {
      expect(await pollUntil(async () => /cdsnap dev serving (\S+);/.test(out), 20_000), out).toBe(true);
      const url = /cdsnap dev serving (\S+);/.exec(out)![1]!;
      const [first] = await untilRecorded(hook.runs, 1);
      expect(first).toMatchObject({ event: "build", orgs: ["demo", "harbor"] });
      expect((await patchJson(url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: "From dev." })).status).toBe(200);
      const runs = await untilRecorded(hook.runs, 2);
      expect(runs[1]).toMatchObject({ event: "patch", orgs: ["demo"] });
      // Logged once the hook has exited, which is after it recorded its run: waited for, not assumed.
      const logged = /^on-change \(patch: 1 paths, 1 tags\) ran in \d+ ms$/m;
      expect(await pollUntil(async () => logged.test(out), 20_000), out).toBe(true);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});
