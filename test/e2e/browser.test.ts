/**
 * A real browser against the real server: headless Chromium (Debian's
 * `chromium`, driven by playwright-core) loads a page from another origin that
 * fetches blocks, posts and categories with `x-api-key`, which makes every
 * request a CORS preflight first, and renders them. Then an organization with
 * `allowed_origins` (harbor) proves the browser refuses a page from an origin
 * not on its list, and accepts it once the origin is added.
 *
 * Without Chromium the test is skipped on a developer machine (saying so) and
 * fails in CI (`CI` or `CDSNAP_E2E_REQUIRED` set): `.ci/run` installs it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { pollUntil } from "../fixtures/wait.js";
import { CHROMIUM_REQUIRED, HAVE_CHROMIUM, launchChromium, warnIfNoChromium } from "../fixtures/chromium.js";
import { build } from "../../src/build.js";
import { DEMO_READ_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { openDatabase } from "../../src/db/open.js";
import { createDatabase } from "../fixtures/database.js";
import { startServer, type RunningServer } from "../../src/server/create-server.js";

const CONTENT = fileURLToPath(new URL("../../content", import.meta.url));

warnIfNoChromium("browser test");

interface LogLine {
  method?: string;
  path?: string;
  status?: number;
}

let dir: string;
let db: string;
let api: RunningServer;
let pages: Server;
let pageOrigin: string;
let context: BrowserContext;
const log: LogLine[] = [];

/**
 * The frontend under test, as a site author would write it: plain fetch with
 * the read key, lists rendered into the DOM, and a visible failure message.
 */
function pageHtml(apiBase: string, orgId: string, key: string): string {
  const config = JSON.stringify({ base: `${apiBase}/api/organizations/${orgId}`, key });
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>cdsnap e2e</title></head>
<body data-state="loading">
<p id="status">loading</p>
<h2>Blocks</h2><ul id="blocks"></ul>
<h2>Posts</h2><ul id="posts"></ul>
<h2>Categories</h2><ul id="categories"></ul>
<script type="module">
const { base, key } = ${config};
async function load(path) {
  const res = await fetch(base + path, { headers: { "x-api-key": key } });
  if (!res.ok) throw new Error("HTTP " + res.status);
  return res.json();
}
function fill(id, items, text) {
  const list = document.getElementById(id);
  for (const item of items) {
    const li = document.createElement("li");
    li.textContent = text(item);
    list.append(li);
  }
}
try {
  const [blocks, contents, categories] = await Promise.all([load("/blocks?pages=home"), load("/contents"), load("/categories")]);
  fill("blocks", blocks.items, (b) => b.name);
  fill("posts", contents.items, (p) => p.title);
  fill("categories", categories.items, (c) => c.value);
  document.getElementById("status").textContent = "loaded";
  document.body.dataset.state = "loaded";
} catch (error) {
  document.getElementById("status").textContent = "failed: " + error.name + ": " + error.message;
  document.body.dataset.state = "failed";
}
</script>
</body></html>`;
}

/**
 * A page that reads the first `posts` posts' details `rounds` times as a site
 * does (the default cache mode), then once each past the HTTP cache
 * (`cache: "no-cache"`), then once each with an If-None-Match of its own, as
 * the client's `ifNoneMatch` sends it.
 */
function manyReadsHtml(apiBase: string, orgId: string, key: string, posts: number, rounds: number): string {
  const config = JSON.stringify({ base: `${apiBase}/api/organizations/${orgId}`, key, posts, rounds });
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>cdsnap e2e: many reads</title></head>
<body data-state="loading">
<p>reading the same posts again and again</p>
<script type="module">
const { base, key, posts, rounds } = ${config};
const read = (path, init = {}) => fetch(base + path, { ...init, headers: { "x-api-key": key, ...init.headers } });
const mark = (name) => fetch("/mark/" + name);
try {
  const list = await (await read("/contents")).json();
  const ids = list.items.slice(0, posts).map((item) => item.id);
  const etags = new Map();
  for (let round = 0; round < rounds; round++) {
    for (const id of ids) {
      const res = await read("/contents/" + id);
      if (res.status !== 200) throw new Error(id + " answered " + res.status);
      etags.set(id, res.headers.get("etag"));
    }
  }
  await mark("no-cache");
  for (const id of ids) await read("/contents/" + id, { cache: "no-cache" });
  await mark("if-none-match");
  for (const id of ids) {
    const res = await read("/contents/" + id, { headers: { "if-none-match": etags.get(id) } });
    if (res.status !== 304) throw new Error(id + " answered " + res.status + " to its own If-None-Match");
  }
  document.body.dataset.state = "loaded";
} catch (error) {
  document.body.dataset.state = "failed: " + error.message;
}
</script>
</body></html>`;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What the API serves, read from Node (no CORS there). */
async function served<T>(orgId: string, key: string, apiPath: string): Promise<T> {
  const res = await fetch(`${api.url}/api/organizations/${orgId}${apiPath}`, { headers: { "x-api-key": key } });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

async function open(pagePath: string): Promise<{ page: Page; state: string }> {
  const page = await context.newPage();
  await page.goto(`${pageOrigin}${pagePath}`);
  await page.waitForSelector("body:not([data-state=loading])", { timeout: 30_000 });
  return { page, state: (await page.getAttribute("body", "data-state")) ?? "" };
}

const texts = (page: Page, list: string) => page.locator(`#${list} li`).allTextContents();

describe.skipIf(!HAVE_CHROMIUM && !CHROMIUM_REQUIRED)("in headless Chromium", () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-e2e-"));
    db = path.join(dir, "db.sqlite");
    createDatabase(db, { demo: true });
    const out = path.join(dir, "site");
    await build({ db, content: CONTENT, out });
    api = await startServer({ db, out, port: 0, authRefreshMs: 20, log: (line) => log.push(line as LogLine) });

    pages = createServer((req, res) => {
      const route = new URL(req.url ?? "/", "http://page.invalid").pathname;
      // The many-reads page marks where each of its phases starts, in the same log as the API's requests.
      if (route.startsWith("/mark/")) {
        log.push({ method: req.method, path: route, status: 204 });
        res.writeHead(204).end();
        return;
      }
      const html =
        route === "/"
          ? pageHtml(api.url, "demo", DEMO_READ_KEY)
          : route === "/harbor"
            ? pageHtml(api.url, "harbor", HARBOR_READ_KEY)
            : route === "/many"
              ? manyReadsHtml(api.url, "demo", DEMO_READ_KEY, 9, 11)
              : null;
      res.writeHead(html ? 200 : 404, { "content-type": "text/html; charset=utf-8" });
      res.end(html ?? "not found");
    });
    pageOrigin = await listen(pages);

    context = await launchChromium(path.join(dir, "profile"));
  });

  afterAll(async () => {
    await context?.close();
    await new Promise<void>((resolve) => (pages ? pages.close(() => resolve()) : resolve()));
    await api?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("a page on another origin loads blocks, posts and categories with its key, after a preflight each", async () => {
    expect(new URL(pageOrigin).origin).not.toBe(new URL(api.url).origin);
    const { page, state } = await open("/");
    expect(await page.textContent("#status")).toBe("loaded");
    expect(state).toBe("loaded");

    const blocks = await served<{ items: { name: string }[] }>("demo", DEMO_READ_KEY, "/blocks?pages=home");
    const contents = await served<{ items: { title: string }[] }>("demo", DEMO_READ_KEY, "/contents");
    const categories = await served<{ items: { value: string }[] }>("demo", DEMO_READ_KEY, "/categories");
    expect(blocks.items.length).toBeGreaterThan(0);
    expect(contents.items.length).toBeGreaterThan(0);
    expect(await texts(page, "blocks")).toEqual(blocks.items.map((b) => b.name));
    expect(await texts(page, "posts")).toEqual(contents.items.map((p) => p.title));
    expect(await texts(page, "categories")).toEqual(categories.items.map((c) => c.value));

    // x-api-key is not a CORS-safelisted header: the browser asked first, for every path.
    for (const apiPath of ["blocks", "contents", "categories"]) {
      const full = `/api/organizations/demo/${apiPath}`;
      expect(log.filter((l) => l.method === "OPTIONS" && l.path === full).map((l) => l.status)).toEqual([204]);
      expect(log.some((l) => l.method === "GET" && l.path === full && l.status === 200)).toBe(true);
    }
    await page.close();
  });

  test("a page reading its content asks one preflight per URL; a read past the HTTP cache, or with its own If-None-Match, asks one each", async () => {
    const before = log.length;
    const { page, state } = await open("/many");
    expect(state).toBe("loaded");
    const seen = log.slice(before).filter((l) => l.method !== undefined);
    const phase = (name: string) => seen.findIndex((l) => l.path === `/mark/${name}`);
    const api = (from: number, to: number, method: string) => seen.slice(from, to).filter((l) => l.method === method && l.path?.startsWith("/api/"));
    const noCache = phase("no-cache");
    const own = phase("if-none-match");
    // 1 + 9 x 11 reads in the default mode: the browser's HTTP cache answers every repeat (and the list, if an earlier page read it).
    const firstGets = api(0, noCache, "GET").map((l) => l.path);
    expect(firstGets).toEqual([...new Set(firstGets)]);
    expect(firstGets.filter((p) => p?.startsWith("/api/organizations/demo/contents/"))).toHaveLength(9);
    const firstPreflights = api(0, noCache, "OPTIONS");
    expect(firstPreflights.map((l) => l.path)).toEqual([...new Set(firstPreflights.map((l) => l.path))]);
    expect(firstPreflights.length).toBeLessThanOrEqual(10);
    // Chromium does not use its preflight cache for a request that bypasses the HTTP cache, nor for one with a conditional header of its own.
    const noCachePreflights = api(noCache, own, "OPTIONS").length;
    const ownPreflights = api(own, seen.length, "OPTIONS").length;
    console.log(
      `browser: ${firstPreflights.length} preflights for 100 reads of 10 URLs in the default cache mode; ` +
        `${noCachePreflights} for 9 reads with cache: "no-cache"; ${ownPreflights} for 9 with an If-None-Match of their own`,
    );
    expect([noCachePreflights, ownPreflights]).toEqual([9, 9]);
    await page.close();
  });

  test("an organization restricted to other origins: the browser refuses the answer, then accepts it once the origin is listed", async () => {
    const before = log.length;
    const refused = await open("/harbor");
    expect(refused.state).toBe("failed");
    // fetch rejects with a TypeError when CORS refuses; the page shows it.
    expect(await refused.page.textContent("#status")).toMatch(/^failed: TypeError: /);
    expect(await texts(refused.page, "blocks")).toEqual([]);
    const harborLog = log.slice(before).filter((l) => l.path?.startsWith("/api/organizations/harbor/"));
    // The preflight got no CORS headers, so the browser never sent the GET itself.
    expect(harborLog.some((l) => l.method === "OPTIONS")).toBe(true);
    expect(harborLog.filter((l) => l.method === "GET")).toEqual([]);
    await refused.page.close();

    // The same page, key and server: only allowed_origins changes.
    const handle = openDatabase(db);
    try {
      handle
        .prepare("UPDATE organizations SET allowed_origins = ? WHERE id = 'harbor'")
        .run(JSON.stringify(["https://harbor.example", pageOrigin]));
    } finally {
      handle.close();
    }
    // The server looks at the origin list again on its own schedule: wait until its preflight allows the page.
    const allowed = await pollUntil(async () => {
      const res = await fetch(`${api.url}/api/organizations/harbor/blocks`, {
        method: "OPTIONS",
        headers: { origin: pageOrigin, "access-control-request-method": "GET", "access-control-request-headers": "x-api-key" },
      });
      return res.headers.get("access-control-allow-origin") === pageOrigin;
    }, 30_000);
    expect(allowed).toBe(true);
    const accepted = await open("/harbor");
    expect(accepted.state).toBe("loaded");
    const blocks = await served<{ items: { name: string }[] }>("harbor", HARBOR_READ_KEY, "/blocks?pages=home");
    expect(await texts(accepted.page, "blocks")).toEqual(blocks.items.map((b) => b.name));
    expect(blocks.items.map((b) => b.name)).toEqual(["Harbor hero"]);
    await accepted.page.close();
  });
});
