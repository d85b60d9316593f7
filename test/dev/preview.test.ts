/**
 * `cdsnap dev --preview`: the preview tree built on every save and served
 * beside the public one; a key with the preview scope reads a draft as it is
 * saved, a read key never does. And the lines `dev --preview` prints work as printed.
 */
import type { ChildProcess } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { startDev, type RunningDev } from "../../src/dev/dev-server.js";
import { makeFixture, removeFixture, type Fixture } from "../fixtures/build-fixture.js";
import { cliPath, runCli, spawnCli } from "../fixtures/cli.js";
import { withDb } from "../fixtures/database.js";
import { DevOutput } from "../fixtures/dev-output.js";
import { postMeta, postText } from "../fixtures/posts.js";
import { CANARY_POSTS, createPreviewKey, expectPreviewSees, expectReadKeyBlind, writeCanaryPosts } from "../fixtures/preview-canaries.js";
import { pollUntil } from "../fixtures/wait.js";

let fx: Fixture;
let dev: RunningDev;
let url: string;
let previewKey: string;
const output = new DevOutput();

beforeAll(async () => {
  await cliPath();
  fx = await makeFixture({ demo: true });
  writeCanaryPosts(fx.content);
  dev = await startDev({ db: fx.db, content: fx.content, out: fx.out, port: 0, preview: true, print: output.print });
  url = await dev.listening;
  previewKey = withDb(fx.db, createPreviewKey);
});
afterAll(async () => {
  await dev?.close();
  await removeFixture(fx);
});

const draftTitle = async (key: string) => {
  const res = await fetch(`${url}/api/organizations/demo/contents/canary-draft`, { headers: { "x-api-key": key } });
  return res.status === 200 ? ((await res.json()) as { title: string }).title : res.status;
};

describe("cdsnap dev --preview", () => {
  test("the first build says it built the preview too", () => {
    expect(output.lines[0]).toMatch(/^rebuilt all organizations in \d+ ms: .*; preview generation \d{6}; next scheduled publish \S+$/);
  });

  test("a preview key sees the draft and the scheduled post; a read key gets 404 and never a canary", async () => {
    await expectPreviewSees(url, previewKey);
    await expectReadKeyBlind(url, DEMO_READ_KEY);
  });

  test("a draft saved again is served to a preview key as saved, and still to no read key", async () => {
    const draft = CANARY_POSTS[0];
    await writeFile(path.join(fx.content, "demo", `${draft.id}.md`), postText(postMeta(draft.id, { ...draft.meta, title: "Second thoughts" })));
    await output.until(async () => (await draftTitle(previewKey)) === "Second thoughts", "the saved draft in the preview");
    expect(await draftTitle(DEMO_READ_KEY)).toBe(404);
  });
});

describe("the lines cdsnap dev --preview prints", () => {
  test("make a key with the preview scope and read the drafts with it", async () => {
    const site = await makeFixture({ demo: true });
    let child: ChildProcess | undefined;
    try {
      writeCanaryPosts(site.content);
      child = await spawnCli(["dev", "--db", site.db, "--content", site.content, "--out", site.out, "--port", "0", "--preview"]);
      let printed = "";
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (printed += chunk));
      expect(await pollUntil(async () => /curl .*\n/.test(printed), 30_000), printed).toBe(true);
      const keyLine = /KEY=\$\(npx cdsnap (keys create .*)\)\n/.exec(printed)![1]!;
      const curlLine = /curl -H "x-api-key: \$KEY" (\S+)\n/.exec(printed)![1]!;
      const created = await runCli(keyLine.split(" "));
      expect(created.code, created.stderr).toBe(0);
      const res = await fetch(curlLine, { headers: { "x-api-key": created.stdout.trim() } });
      const items = ((await res.json()) as { items: { id: string; status: string }[] }).items;
      expect(items.filter((i) => i.status !== "published").map((i) => i.id)).toEqual(expect.arrayContaining(["canary-draft", "canary-scheduled"]));
    } finally {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child!.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      await removeFixture(site);
    }
  });
});
