/**
 * `cdsnap dev` publishes a scheduled post on time without a save: the real
 * dev server (watcher, rebuild queue, build, server on port 0) on real posts,
 * polled with a real client. A scheduled build that fails is tried again, and
 * a save that fixes the sources publishes what fell due.
 */
import { unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { startDev, type RunningDev } from "../../src/dev/dev-server.js";
import type { ScheduleClock } from "../../src/schedule/publish-schedule.js";
import { fixturesRemovedAfterEach } from "../fixtures/build-fixture.js";
import { DevOutput } from "../fixtures/dev-output.js";
import { expectServedOnTime, ORG, pollScheduledPost, PUBLISHED_CHANGE, SCHEDULED_PATH, scheduledSite } from "../fixtures/scheduled-posts.js";

const { fixture } = fixturesRemovedAfterEach();

/** The wall clock, whose timers wait (counting from when they were set) until the test releases them. */
function heldClock() {
  interface Held {
    fire: () => void;
    at: number;
    timer?: NodeJS.Timeout;
  }
  const held = new Set<Held>();
  let released = false;
  const start = (entry: Held) => {
    entry.timer = setTimeout(() => {
      held.delete(entry);
      entry.fire();
    }, Math.max(0, entry.at - Date.now()));
  };
  const clock: ScheduleClock = {
    now: () => Date.now(),
    setTimer(fire, ms) {
      const entry: Held = { fire, at: Date.now() + ms };
      held.add(entry);
      if (released) start(entry);
      return entry;
    },
    clearTimer(entry) {
      clearTimeout((entry as Held).timer);
      held.delete(entry as Held);
    },
  };
  return {
    clock,
    release(): void {
      released = true;
      for (const entry of held) start(entry);
    },
  };
}

let dev: RunningDev | undefined;
afterEach(async () => {
  await dev?.close();
  dev = undefined;
});

describe("cdsnap dev and scheduled posts", () => {
  test("a post scheduled 3 s ahead is served within 2 s of its time, with no save", async () => {
    const site = await scheduledSite(await fixture(), new Date(Date.now() + 3_000));
    const output = new DevOutput();
    dev = await startDev({ db: site.db, content: site.content, out: site.out, port: 0, print: output.print });
    const url = await dev.listening;
    expect(output.lines[0]).toMatch(new RegExp(`^rebuilt all organizations in \\d+ ms: .*; next scheduled publish ${site.at.toISOString()}$`));

    expectServedOnTime(await pollScheduledPost(url, site.key, site.at.getTime() + 10_000), site.at);
    await output.until(() => output.lines.some((line) => line.includes(" for the posts due at ")), "the scheduled build's line");
    expect(output.lines.find((line) => line.includes(" for the posts due at "))).toMatch(
      new RegExp(`^rebuilt all organizations for the posts due at ${site.at.toISOString()} in \\d+ ms: ${PUBLISHED_CHANGE.paths.length} files written, 0 removed; serving generation \\d+$`),
    );
  });

  test("a scheduled build that fails is tried again; the save that fixes the sources publishes the post", async () => {
    const site = await scheduledSite(await fixture(), new Date(Date.now() + 1_000));
    const output = new DevOutput();
    const time = heldClock();
    dev = await startDev({ db: site.db, content: site.content, out: site.out, port: 0, print: output.print, clock: time.clock });
    const url = await dev.listening;
    const broken = path.join(site.content, ORG, "broken.md");
    await writeFile(broken, "---\nid: broken\ntitle: Broken: a colon\n---\nBody.\n");
    await output.until(() => output.lines.some((line) => line.startsWith("build failed")), "the save's build fails");
    // Only now may the post fall due, however long the steps above took.
    time.release();

    await output.until(() => output.lines.some((line) => line.startsWith("scheduled posts not published yet: trying again in 1 s")), "a retry");
    const get = () => fetch(`${url}${SCHEDULED_PATH}`, { headers: { "x-api-key": site.key } });
    expect((await get()).status).toBe(404);

    await unlink(broken);
    await output.until(async () => (await get()).status === 200, "the post served once the sources are fixed");
  });
});
