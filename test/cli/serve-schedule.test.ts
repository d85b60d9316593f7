/**
 * `cdsnap serve --schedule` as an operator runs it: a post scheduled three
 * seconds after the build is answered 404 until its time and 200 within two
 * seconds of it (the deadline), polled with a real client, and the
 * `--on-change` command hears of that build. `CDSNAP_SCHEDULE` turns it on
 * like a flag, and only with a value that means on.
 */
import { beforeAll, describe, expect, test } from "vitest";
import { treeStoreOf } from "../../src/emit/tree-store.js";
import { fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { cliPath, runCli } from "../fixtures/cli.js";
import { recordingHook, untilRecorded } from "../fixtures/hook.js";
import { api } from "../fixtures/http.js";
import { expectServedOnTime, ORG, pollScheduledPost, PUBLISHED_CHANGE, scheduledSite } from "../fixtures/scheduled-posts.js";
import { startCliServer, stopCliServer, type CliServer } from "../fixtures/served-site.js";
import { pollUntil } from "../fixtures/wait.js";

const { fixture } = fixturesRemovedAfterEach();

beforeAll(async () => {
  await cliPath();
});

/** The JSON lines the server logged so far. */
const logged = (cli: CliServer) =>
  cli
    .stdout()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("cdsnap serve --schedule", () => {
  test("a post scheduled 3 s ahead is served within 2 s of its time, and --on-change hears of it", async () => {
    const fx = await fixture();
    const hook = recordingHook(fx.dir);
    const site = await scheduledSite(fx, new Date(Date.now() + 3_000));
    const cli = await startCliServer({ ...site, stateDir: treeStoreOf(site.out).stateDir }, ["--schedule", "--on-change", hook.command]);
    try {
      const answers = await pollScheduledPost(cli.url, site.key, site.at.getTime() + 10_000);
      expectServedOnTime(answers, site.at);

      const [run] = await untilRecorded(hook.runs, 1);
      expect(run).toMatchObject({
        event: "build",
        ...PUBLISHED_CHANGE,
        orgs: [ORG],
      });
      expect(logged(cli).find((line) => line.msg === "scheduled build")).toMatchObject({ due: site.at.toISOString(), changed: true, nextPublishAt: null });
    } finally {
      await stopCliServer(cli);
    }
  });

  test("CDSNAP_SCHEDULE=1 turns it on, 0 leaves it off, and a value that means neither is refused", async () => {
    const fx = await fixture();
    const site = await scheduledSite(fx, new Date(Date.now() + 3_600_000));
    const served = { ...site, stateDir: treeStoreOf(site.out).stateDir };
    for (const [value, on] of [["1", true], ["0", false]] as const) {
      const cli = await startCliServer(served, [], { CDSNAP_SCHEDULE: value });
      try {
        // Lines are logged in order: once the request's line is out, the schedule's would be before it.
        await fetch(`${cli.url}${api(ORG, "contents")}`, { headers: { "x-api-key": site.key } });
        expect(await pollUntil(async () => logged(cli).some((line) => line.method === "GET"), 10_000)).toBe(true);
        const schedule = logged(cli).find((line) => line.msg === "publish schedule");
        expect(schedule, `CDSNAP_SCHEDULE=${value}`).toEqual(on ? expect.objectContaining({ nextPublishAt: site.at.toISOString() }) : undefined);
      } finally {
        await stopCliServer(cli);
      }
    }
    const refused = await runCli(["serve", "--db", site.db, "--content", site.content, "--out", site.out, "--port", "0"], {
      env: { CDSNAP_SCHEDULE: "maybe" },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('cdsnap: CDSNAP_SCHEDULE must be 1 or true to turn --schedule on, or 0, false or empty for off, not "maybe"\n');
  });
});
