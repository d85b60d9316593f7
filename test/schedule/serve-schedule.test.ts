/**
 * `serve --schedule` through the real server, the real build, a real SQLite
 * file and real posts: it builds when a scheduled post falls due, learns of
 * one a CI build added, keeps trying after a failed build (invalid sources,
 * the lock held) until it succeeds, tells the on-change hook, and its close()
 * waits for a build in flight. Each test waits for the server's log lines
 * (events); a bound on waiting is the test's timeout.
 */
import { readFile, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { build } from "../../src/build.js";
import { stateFileOf } from "../../src/emit/build-state.js";
import { acquireBuildLock, treeStoreOf } from "../../src/emit/tree-store.js";
import type { Change } from "../../src/on-change/change-set.js";
import type { ServeScheduleOptions } from "../../src/schedule/serve-schedule.js";
import { startServer, type RunningServer, type ServeOptions } from "../../src/server/create-server.js";
import { fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { ORG, PUBLISHED_CHANGE, SCHEDULED, SCHEDULED_PATH, scheduledSite, waitableLog, writeScheduledPost, type ScheduledSite } from "../fixtures/scheduled-posts.js";

const { fixture } = fixturesRemovedAfterEach();

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close(1_000);
  running = undefined;
});

/** The real server on the site, scheduling, with a log the test waits on. */
async function serveScheduling(site: ScheduledSite, extra: Partial<ServeOptions> & Pick<ServeScheduleOptions, "build"> = {}) {
  const log = waitableLog();
  const { build: wrapped, ...options } = extra;
  running = await startServer({
    db: site.db,
    out: site.out,
    port: 0,
    log: log.log,
    ...options,
    schedule: { content: site.content, watchMs: 20, build: wrapped },
  });
  const get = (apiPath: string) => fetch(`${running!.url}${apiPath}`, { headers: { "x-api-key": site.key } });
  return { log, get, server: running };
}

const inSeconds = (s: number) => new Date(Date.now() + s * 1_000);
/** A moment a CI build ran, before the post's instant: it is scheduled, not published. */
const before = (at: Date) => new Date(at.getTime() - 60_000);

describe("serve --schedule", () => {
  test("builds when the post falls due, logs one line for it, and serves the post", async () => {
    const site = await scheduledSite(await fixture(), inSeconds(1));
    expect(site.report.nextPublishAt).toBe(site.at.toISOString());
    const { log, get } = await serveScheduling(site);
    expect(log.lines[0]).toMatchObject({ msg: "publish schedule", nextPublishAt: site.at.toISOString() });

    const line = await log.nth(1, "scheduled build");
    expect(line.receivedAt).toBeGreaterThanOrEqual(site.at.getTime());
    expect(line).toMatchObject({
      msg: "scheduled build",
      due: site.at.toISOString(),
      changed: true,
      orgs: [ORG],
      filesWritten: PUBLISHED_CHANGE.paths.length,
      filesRemoved: 0,
      nextPublishAt: null,
    });
    expect(line.ms).toEqual(expect.any(Number));
    expect((await get(SCHEDULED_PATH)).status).toBe(200);
  });

  test("a preview tree beside the public one is built too: the post falls due there as well", async () => {
    const site = await scheduledSite(await fixture(), inSeconds(1));
    await build({ db: site.db, content: site.content, out: site.out, now: before(site.at), preview: true });
    const preview = path.join(`${site.out}.preview`, "api/organizations", ORG, "contents/by-slug", `${SCHEDULED}.json`);
    expect(JSON.parse(await readFile(preview, "utf8"))).toMatchObject({ status: "scheduled" });
    const { log } = await serveScheduling(site);
    await log.nth(1, "scheduled build");
    expect(JSON.parse(await readFile(preview, "utf8"))).toMatchObject({ status: "published" });
  });

  test("a post a CI build added while serve runs is published at its time, though that build changed no file", async () => {
    const site = await scheduledSite(await fixture(), null);
    const { log, get } = await serveScheduling(site);
    expect(log.lines[0]).toMatchObject({ msg: "publish schedule", nextPublishAt: null });

    const at = inSeconds(1.5);
    await writeScheduledPost(site, at);
    const ci = await build({ db: site.db, content: site.content, out: site.out, now: before(at) });
    expect(ci).toMatchObject({ changed: false, nextPublishAt: at.toISOString() });
    expect(await log.nth(1, "publish schedule", (line) => line.nextPublishAt !== null)).toMatchObject({
      nextPublishAt: at.toISOString(),
      learnedFrom: "a build's state",
    });

    expect(await log.nth(1, "scheduled build")).toMatchObject({ due: at.toISOString(), changed: true });
    expect((await get(SCHEDULED_PATH)).status).toBe(200);
  });

  test("invalid sources: one error line per try, 1 s then 2 s apart; once fixed it recovers without a restart", async () => {
    const site = await scheduledSite(await fixture(), inSeconds(0.5));
    const broken = path.join(site.content, ORG, "broken.md");
    await writeFile(broken, "---\nid: broken\ntitle: Broken: a colon\n---\nBody.\n");
    const { log, get } = await serveScheduling(site);

    const first = await log.nth(1, "scheduled build failed");
    const second = await log.nth(2, "scheduled build failed");
    await unlink(broken);
    expect(first).toMatchObject({
      level: "error",
      code: "invalid_sources",
      error: expect.stringMatching(/^the sources have \d+ problems?; nothing was written$/),
      retryInMs: 1_000,
    });
    expect(first.problems).toEqual(expect.arrayContaining([expect.stringMatching(/^acme\/broken\.md:\d+: /)]));
    expect(second).toMatchObject({ code: "invalid_sources", retryInMs: 2_000 });
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(1_000);
    expect((await get(SCHEDULED_PATH)).status).toBe(404);

    const recovered = await log.nth(1, "scheduled build");
    expect(recovered.receivedAt - second.receivedAt).toBeGreaterThanOrEqual(2_000);
    expect(recovered).toMatchObject({ due: site.at.toISOString(), changed: true });
    expect((await get(SCHEDULED_PATH)).status).toBe(200);
    expect(log.lines.filter((line) => line.msg === "scheduled build failed")).toHaveLength(2);
  });

  test("another build holding the lock: the scheduled build is tried again once it is released", async () => {
    const site = await scheduledSite(await fixture(), inSeconds(0.5));
    const release = await acquireBuildLock(treeStoreOf(site.out));
    const { log, get } = await serveScheduling(site);

    const refused = await log.nth(1, "scheduled build failed");
    expect(refused).toMatchObject({
      code: "usage",
      error: expect.stringMatching(new RegExp(`^another build \\(pid ${process.pid} on .+\\) is writing ${site.out}; wait for it to finish$`)),
      retryInMs: 1_000,
    });
    expect(refused.problems).toBeUndefined();
    await release();
    expect(await log.nth(1, "scheduled build")).toMatchObject({ due: site.at.toISOString(), changed: true });
    expect((await get(SCHEDULED_PATH)).status).toBe(200);
  });

  test("the on-change hook hears of a scheduled build: its paths, tags and organization", async () => {
    const site = await scheduledSite(await fixture(), inSeconds(0.5));
    const changes: Change[] = [];
    const { log } = await serveScheduling(site, { onChange: (change) => changes.push(change) });
    await log.nth(1, "scheduled build");
    expect(changes).toEqual([
      {
        event: "build",
        ...PUBLISHED_CHANGE,
        orgs: [ORG],
      },
    ]);
  });

  test("close() while a scheduled build is in flight waits for it to finish, and then nothing builds", async () => {
    const site = await scheduledSite(await fixture(), inSeconds(0.5));
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const events: string[] = [];
    const { log } = await serveScheduling(site, {
      build: async (options) => {
        started();
        await gate;
        const report = await build(options);
        events.push("build finished");
        return report;
      },
    });
    await inFlight;
    const server = running!;
    running = undefined;
    const closing = server.close(1_000).then(() => events.push("closed"));
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(events).toEqual([]);
    open();
    await closing;
    expect(events).toEqual(["build finished", "closed"]);
    expect(log.lines.filter((line) => line.msg === "scheduled build")).toHaveLength(1);
    expect(await fetch(`${server.url}${SCHEDULED_PATH}`).catch((error: Error) => error.cause)).toMatchObject({ code: "ECONNREFUSED" });
  });

  test("a tree whose build state does not say (an upgrade, a state deleted): it builds at once to learn the next instant", async () => {
    const site = await scheduledSite(await fixture(), inSeconds(3_600));
    await rm(stateFileOf(treeStoreOf(site.out)));
    const { log, get } = await serveScheduling(site);
    expect(log.lines[0]).toMatchObject({ msg: "publish schedule", nextPublishAt: null, buildingNow: expect.any(String) });
    expect(await log.nth(1, "scheduled build")).toMatchObject({ nextPublishAt: site.at.toISOString() });
    expect((await get(SCHEDULED_PATH)).status).toBe(404);
  });
});
