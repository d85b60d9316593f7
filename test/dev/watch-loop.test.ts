/**
 * `cdsnap dev` end to end: a real content folder and database, the real
 * server on port 0, and edits made the way an editor makes them. Edit, break,
 * fix: the last good tree is served throughout, and recovery needs no restart.
 */
import { mkdir, mkdtemp, rm, symlink, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { openDatabase } from "../../src/db/open.js";
import { createDatabase } from "../fixtures/database.js";
import { startDev, type RunningDev } from "../../src/dev/dev-server.js";
import { DevOutput } from "../fixtures/dev-output.js";

let dir: string;
let db: string;
let content: string;
let dev: RunningDev;
let url: string;
const output = new DevOutput();
const printed = output.lines;

function postText(title: string, slug = "first", extra = ""): string {
  return `---\nid: ${slug}\ntitle: ${title}\nslug: ${slug}\nstatus: published\npublishedAt: 2025-01-10\nauthorName: Ada\ncategory: brewing\n${extra}---\nBody of ${slug}.\n`;
}

async function get<T>(apiPath: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}/api/organizations/demo/${apiPath}`, { headers: { "x-api-key": DEMO_READ_KEY } });
  return { status: res.status, body: (await res.json()) as T };
}

const titleOfFirst = async () => (await get<{ title?: string }>("contents/by-slug/first")).body.title;

/** The build results printed since line `from`. */
const buildLinesSince = (from: number) => printed.slice(from).filter((l) => /^(rebuilt|build failed)/.test(l));

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-dev-"));
  db = path.join(dir, "db.sqlite");
  content = path.join(dir, "content");
  await mkdir(path.join(content, "demo"), { recursive: true });
  createDatabase(db, { demo: true });
  await writeFile(path.join(content, "demo", "first.md"), postText("First title"));
  await writeFile(path.join(content, "demo", "second.md"), postText("Second post", "second"));
  dev = await startDev({ db, content, out: path.join(dir, "site"), port: 0, print: output.print });
  url = await dev.listening;
});

afterAll(async () => {
  await dev?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("cdsnap dev", () => {
  test("serves the tree it built on start", async () => {
    expect(await titleOfFirst()).toBe("First title");
    expect(printed[0]).toMatch(/^rebuilt all organizations in \d+ ms: \d+ files written/);
  });

  test("a saved post is served after a rebuild of its organization alone", async () => {
    const from = printed.length;
    await writeFile(path.join(content, "demo", "first.md"), postText("Edited title"));
    await output.until(async () => (await titleOfFirst()) === "Edited title", "the edited title is served");
    expect(buildLinesSince(from).length).toBeGreaterThan(0);
    for (const line of buildLinesSince(from)) expect(line).toMatch(/^rebuilt demo in \d+ ms/);
  });

  test("a broken file prints a clear error naming it, and the last good tree keeps being served", async () => {
    const before = printed.length;
    await writeFile(path.join(content, "demo", "first.md"), postText("Broken title").replace("slug: first", "slug: [first"));
    await output.until(() => printed.slice(before).some((l) => l.startsWith("build failed")), "the failure is printed");
    const failure = printed.slice(before).find((l) => l.startsWith("build failed"))!;
    expect(failure).toMatch(/\n {2}demo\/first\.md:\d+: front matter: /);
    expect(failure).toContain("still serving the last good tree");
    expect(await titleOfFirst()).toBe("Edited title");
    expect((await get<{ items: unknown[] }>("contents")).body.items).toHaveLength(2);
  });

  test("fixing the file recovers without a restart", async () => {
    await writeFile(path.join(content, "demo", "first.md"), postText("Fixed title"));
    await output.until(async () => (await titleOfFirst()) === "Fixed title", "the fixed title is served");
  });

  test("new and deleted posts are picked up", async () => {
    const slugs = async () => (await get<{ items: { slug: string }[] }>("contents")).body.items.map((p) => p.slug).sort();
    await mkdir(path.join(content, "demo", "2026"), { recursive: true });
    await writeFile(path.join(content, "demo", "2026", "third.md"), postText("Third", "third"));
    await output.until(async () => (await slugs()).includes("third"), "the new post is listed");
    await unlink(path.join(content, "demo", "second.md"));
    await output.until(async () => (await slugs()).join() === "first,third", "the deleted post is gone");
  });

  test("a database change rebuilds too", async () => {
    const handle = openDatabase(db);
    try {
      handle.prepare("UPDATE categories SET value = 'Brewing, renamed' WHERE org_id = 'demo' AND slug = 'brewing'").run();
    } finally {
      handle.close();
    }
    await output.until(
      async () => (await get<{ categoryName: string }>("contents/by-slug/first")).body.categoryName === "Brewing, renamed",
      "the renamed category is served",
    );
  });

  test("a build's warnings are printed", async () => {
    const from = printed.length;
    await symlink(path.join(dir, "nowhere"), path.join(content, "demo", "images"));
    await writeFile(path.join(content, "demo", "first.md"), postText("Title beside a broken link"));
    await output.until(async () => (await titleOfFirst()) === "Title beside a broken link", "the post saved beside the link is served");
    expect(printed.slice(from)).toContainEqual(expect.stringMatching(/^warning: demo\/images: is a symbolic link to .*nowhere, which does not exist/));
    await unlink(path.join(content, "demo", "images"));
  });

  test("files that are not posts change nothing, and a quiet folder stays quiet (no rebuild loop)", async () => {
    await dev.idle();
    const before = printed.length;
    await writeFile(path.join(content, "demo", ".first.md.swp"), "editor state");
    await writeFile(path.join(content, "demo", "notes.txt"), "not a post");
    await new Promise((r) => setTimeout(r, 800));
    await dev.idle();
    expect(printed.slice(before)).toEqual([]);
  });
});
