/**
 * examples/next-site as a Next.js developer runs it: the working tree copied as
 * a clone has it, the example copied out of it, @cdsnap/client packed into the
 * example's folder (the tarball its package.json names), `npm install`,
 * `next build` and `next start`, reading the real `cdsnap serve`, whose
 * `--on-change` is the example's scripts/on-change.sh. A PATCH through serve
 * shows on the page built before it, without a rebuild; a revalidation without
 * the secret is refused and expires nothing. The example's render and tag
 * modules, loaded from the installed project, are held to hostile markdown and
 * to the Cache-Tag values serve sends.
 *
 * The hook needs curl: without it the test is skipped on a developer machine
 * (saying so) and fails in CI (`CI` or `CDSNAP_E2E_REQUIRED` set).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { access, cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { decodeHTML } from "entities";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ORG_ID, DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import type { ContentDetail, ContentList, Reference } from "../../src/client/index.js";
import { removeFixture } from "../fixtures/build-fixture.js";
import { cliPath } from "../fixtures/cli.js";
import { shellQuote } from "../fixtures/hook.js";
import { api, call, freePort, patchJson, rawGet } from "../fixtures/http.js";
import { copyWorkingTree, ok, STEP_TIMEOUT_MS, userEnv } from "../fixtures/pack.js";
import { makeSite, startCliServer, stopCliServer, type CliServer, type Site } from "../fixtures/served-site.js";
import { pollUntil } from "../fixtures/wait.js";

const REQUIRED = Boolean(process.env.CI || process.env.CDSNAP_E2E_REQUIRED);
const HAVE_CURL = spawnSync("sh", ["-c", "command -v curl"]).status === 0;
if (!HAVE_CURL && !REQUIRED) console.warn("next test skipped: curl missing (apt-get install curl); CI runs it");

/**
 * No telemetry: the build and the server must need no network but the API's.
 * And no NODE_ENV: vitest sets it to `test`, under which Next reads no
 * .env.local; a user's shell has none.
 */
const NEXT_ENV = { NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: undefined };
/** How long a change may take to show on the page: the hook's run and one render, with room for a loaded machine. */
const CHANGE_SHOWS_MS = 20_000;

/** lib/render.ts of the example, as the test calls it. */
interface RenderModule {
  renderBody(markdown: string, references: readonly Reference[] | null): string;
}
/** lib/tags.ts of the example. */
interface TagsModule {
  tagsOf(apiPath: string): string[];
}

let dir: string;
let project: string;
let site: Site;
let serve: CliServer;
let next: ChildProcess;
let nextExited: Promise<unknown>;
let nextOutput = "";
let nextUrl: string;
let secret: string;
/** Made to make the hook's CDN step fail, so that the Next step never runs. */
let cdnDown: string;
/** Every event the hook's CDN step was given, one JSON line each. */
let purged: string;

const ORGANIZATION_PATH = api(DEMO_ORG_ID, "organization");

/** The business description on the site's home page, as text. */
async function shownDescription(): Promise<string> {
  const res = await fetch(`${nextUrl}/`);
  const html = await res.text();
  if (res.status !== 200) throw new Error(`GET / answered ${res.status}\n${html.slice(0, 2000)}\n${nextOutput}`);
  const match = /<p id="business-description">([^<]*)<\/p>/.exec(html);
  if (!match) throw new Error(`GET / shows no business description:\n${html.slice(0, 2000)}`);
  return decodeHTML(match[1]!);
}

/** The `--on-change` runs serve logged so far. */
function hookRuns(): Record<string, unknown>[] {
  return `${serve.stdout()}\n${serve.stderr()}`
    .split("\n")
    .filter((line) => line.includes('"msg":"on-change"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function untilHookRuns(count: number): Promise<Record<string, unknown>[]> {
  if (!(await pollUntil(async () => hookRuns().length >= count, CHANGE_SHOWS_MS))) {
    throw new Error(`serve logged ${hookRuns().length} on-change runs, not ${count}:\n${serve.stdout()}\n${serve.stderr()}`);
  }
  return hookRuns();
}

function revalidate(body: unknown, authorization?: string): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (authorization !== undefined) headers.authorization = authorization;
  return fetch(`${nextUrl}/api/revalidate`, { method: "POST", headers, body: JSON.stringify(body) });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe.skipIf(!HAVE_CURL && !REQUIRED)("examples/next-site, installed, built and started against cdsnap serve", () => {
  beforeAll(async () => {
    if (!HAVE_CURL) throw new Error("curl missing; CI must install it (see .ci/run)");
    dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-next-"));
    const source = path.join(dir, "source");
    project = path.join(dir, "site");
    await copyWorkingTree(source);
    await cp(path.join(source, "examples", "next-site"), project, { recursive: true });
    await ok(source, "npm", ["pack", "-w", "packages/client", "--pack-destination", project], STEP_TIMEOUT_MS);
    const manifest = JSON.parse(await readFile(path.join(project, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const tarball = manifest.dependencies["@cdsnap/client"]!.replace(/^file:/, "");
    await access(path.join(project, tarball)).catch(() => {
      throw new Error(`the example's package.json installs ${tarball}, which npm pack -w packages/client did not write`);
    });

    let started = performance.now();
    await ok(project, "npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], STEP_TIMEOUT_MS);
    console.log(`examples/next-site: npm install took ${seconds(performance.now() - started)}`);

    await cliPath();
    site = await makeSite();
    nextUrl = `http://127.0.0.1:${await freePort()}`;
    secret = randomBytes(32).toString("hex");
    cdnDown = path.join(dir, "cdn-down");
    purged = path.join(dir, "purged.jsonl");
    serve = await startCliServer(site, ["--on-change", shellQuote(path.join(project, "scripts", "on-change.sh"))], {
      NEXT_SITE_URL: nextUrl,
      REVALIDATE_SECRET: secret,
      CDN_PURGE: `cat >> ${shellQuote(purged)} && test ! -e ${shellQuote(cdnDown)}`,
    });
    await writeFile(
      path.join(project, ".env.local"),
      `CMS_URL=${serve.url}\nCMS_ORG=${DEMO_ORG_ID}\nCMS_READ_KEY=${DEMO_READ_KEY}\nREVALIDATE_SECRET=${secret}\n`,
    );

    started = performance.now();
    const nextBin = path.join(project, "node_modules", ".bin", "next");
    await ok(project, nextBin, ["build"], STEP_TIMEOUT_MS, NEXT_ENV);
    console.log(`examples/next-site: next build took ${seconds(performance.now() - started)}`);

    const port = new URL(nextUrl).port;
    // Its own process group: stopping it reaches whatever next start started.
    next = spawn(nextBin, ["start", "--port", port, "--hostname", "127.0.0.1"], {
      cwd: project,
      env: { ...userEnv(), ...NEXT_ENV },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    next.stdout!.setEncoding("utf8").on("data", (chunk: string) => (nextOutput += chunk));
    next.stderr!.setEncoding("utf8").on("data", (chunk: string) => (nextOutput += chunk));
    nextExited = new Promise((resolve) => next.once("exit", resolve));
    const up = await pollUntil(
      () =>
        fetch(`${nextUrl}/`).then(
          (res) => res.status === 200,
          () => false,
        ),
      30_000,
    );
    if (!up) throw new Error(`next start did not answer:\n${nextOutput}`);
  }, 4 * STEP_TIMEOUT_MS);

  afterAll(async () => {
    if (next?.exitCode === null && next.signalCode === null) {
      process.kill(-next.pid!, "SIGTERM");
      await nextExited;
    }
    await stopCliServer(serve);
    await removeFixture(site);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("shows the organization's business description as serve answers it", async () => {
    const organization = (await rawGet(serve.url, ORGANIZATION_PATH, DEMO_READ_KEY)) as { businessDescription: string };
    expect(await shownDescription()).toBe(organization.businessDescription);
  });

  it("refuses a revalidation without the secret (401), which expires nothing", async () => {
    const before = await shownDescription();
    const runsBefore = hookRuns().length;
    // The hook's CDN step fails, so this change reaches serve and not the site.
    await writeFile(cdnDown, "");
    const res = await patchJson(serve.url, api(DEMO_ORG_ID, "business-description"), DEMO_WRITE_KEY, { businessDescription: "Told to no one." });
    expect(res.status).toBe(200);
    const runs = await untilHookRuns(runsBefore + 1);
    expect(runs.at(-1)).toMatchObject({ event: "patch", status: "failed", exitCode: 1 });
    await rm(cdnDown);
    const event = JSON.parse((await readFile(purged, "utf8")).trim()) as Record<string, unknown>;
    expect(event).toMatchObject({ event: "patch", paths: [ORGANIZATION_PATH], tags: [`organization:${DEMO_ORG_ID}`] });
    expect(await shownDescription()).toBe(before);

    for (const authorization of [undefined, `Bearer ${secret.slice(0, -1)}`, `Bearer ${secret}x`, secret, `Basic ${secret}`]) {
      const refused = await revalidate(event, authorization);
      expect(refused.status, String(authorization)).toBe(401);
      expect(refused.headers.get("www-authenticate")).toBe("Bearer");
    }
    expect(await shownDescription()).toBe(before);

    // The same event with the secret: the page was stale only for want of it.
    const accepted = await revalidate(event, `Bearer ${secret}`);
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toEqual({ revalidated: 2 });
    expect(await shownDescription()).toBe("Told to no one.");
  });

  it("shows a PATCH through serve on the page built before it, once the hook has run: no rebuild", async () => {
    const buildId = await readFile(path.join(project, ".next", "BUILD_ID"), "utf8");
    const runsBefore = hookRuns().length;
    const description = `Roasted on the waterfront, ${randomBytes(4).toString("hex")}.`;
    const started = performance.now();
    const res = await patchJson(serve.url, api(DEMO_ORG_ID, "business-description"), DEMO_WRITE_KEY, { businessDescription: description });
    expect(res.status).toBe(200);
    const shown = await pollUntil(async () => (await shownDescription()) === description, CHANGE_SHOWS_MS);
    const ms = performance.now() - started;
    expect(shown, `the page still shows "${await shownDescription()}"; serve logged:\n${serve.stdout()}\n${serve.stderr()}`).toBe(true);
    console.log(`examples/next-site: a PATCH showed on the page ${(ms / 1000).toFixed(2)} s after it was sent`);
    const runs = await untilHookRuns(runsBefore + 1);
    expect(runs.at(-1)).toMatchObject({ event: "patch", status: "ok" });
    expect((await readFile(purged, "utf8")).trim().split("\n")).toHaveLength(2);
    expect(await readFile(path.join(project, ".next", "BUILD_ID"), "utf8")).toBe(buildId);
  });

  it("renders a post's body with each [N] marker linked to its reference", async () => {
    const { items } = (await rawGet(serve.url, api(DEMO_ORG_ID, "contents"), DEMO_READ_KEY)) as ContentList;
    const posts = await Promise.all(items.map(({ id }) => rawGet(serve.url, api(DEMO_ORG_ID, `contents/${id}`), DEMO_READ_KEY) as Promise<ContentDetail>));
    const post = posts.find((p) => (p.references?.length ?? 0) >= 2 && p.content.includes("[2]"));
    expect(post, "the demo has a published post citing two references").toBeDefined();
    const references = post!.references!;

    const res = await fetch(`${nextUrl}/blog/${post!.slug}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const cited = [...html.matchAll(/<sup><a href="#ref-(\d+)"[^>]*>\[(\d+)\]<\/a><\/sup>/g)];
    expect(cited.length).toBeGreaterThanOrEqual(2);
    for (const [, target, text] of cited) expect(target).toBe(text);
    expect(new Set(cited.map(([, n]) => Number(n)))).toEqual(new Set(references.map((_, i) => i + 1)));
    references.forEach((reference, i) => {
      expect(html).toContain(`<li id="ref-${i + 1}"><a href="${reference.url}">`);
    });
  });

  it("a missing post is a 404 page", async () => {
    expect((await fetch(`${nextUrl}/blog/no-such-post`)).status).toBe(404);
  });

  describe("lib/render.ts on hostile markdown", () => {
    let render: RenderModule["renderBody"];
    const refs: Reference[] = [
      { source: `Lab "quoted" <b>&`, url: "https://lab.example/water" },
      { source: "Handbook", url: "https://handbook.example/" },
    ];
    beforeAll(async () => {
      // From the installed project: its marked and hast utilities, not this repository's.
      render = ((await import(path.join(project, "lib", "render.ts"))) as RenderModule).renderBody;
    });

    it("links markers that have a reference, and leaves the others, code and link text alone", () => {
      const html = render("Water [1], hardness [2][1], none [3], zero [0], `code [1]`, [1](https://x.example/), \\[2\\], [see [1]](https://y.example/).", refs);
      expect(html).toBe(
        '<p>Water <sup><a href="#ref-1" title="Lab &#x22;quoted&#x22; <b>&#x26;">[1]</a></sup>, ' +
          'hardness <sup><a href="#ref-2" title="Handbook">[2]</a></sup><sup><a href="#ref-1" title="Lab &#x22;quoted&#x22; <b>&#x26;">[1]</a></sup>, ' +
          'none [3], zero [0], <code>code [1]</code>, <a href="https://x.example/">1</a>, [2], <a href="https://y.example/">see [1]</a>.</p>\n',
      );
      expect(render("Water [1].", null)).toBe("<p>Water [1].</p>\n");
      expect(render("```\n[1]\n```", refs)).toBe("<pre><code>[1]\n</code></pre>\n");
    });

    it("neutralises scripts, handlers, javascript: and data: URLs, and ids that would clobber the page's", () => {
      const html = render(
        [
          "Hi <script>alert(1)</script> [1]",
          '<img src=x onerror="alert(2)"> <a href="javascript:alert(3)">a</a> [b](javascript:alert(4)) [c](JAVASCRIPT:alert(5))',
          '<a href="jav&#x61;script:alert(6)">d</a> <svg><script>alert(7)</script></svg> <iframe src="https://e.example/">f</iframe>',
          '<style>body{display:none}</style><div id="business-description" name="cms" onclick="alert(8)" style="color:red">g</div>',
          "![i](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=) <form action=\"https://evil.example/\"><input name=\"q\"></form>",
          "[post](post:other-post#part)",
        ].join("\n\n"),
        refs,
      );
      expect(html).not.toMatch(/<script|<svg|<iframe|<style|<form|\bon\w+=|javascript:|data:|style=/i);
      expect(html).not.toMatch(/alert|display:none/);
      expect(html).toContain('<div id="user-content-business-description" name="user-content-cms">g</div>');
      expect(html).toContain('<img src="x">');
      expect(html).toContain('<a href="/blog/other-post#part">post</a>');
      expect(html).toContain('<sup><a href="#ref-1"');
    });
  });

  it("lib/tags.ts tags each read with its path, org:<id> and the answer's own Cache-Tag where the path tells it", async () => {
    const { tagsOf } = (await import(path.join(project, "lib", "tags.ts"))) as TagsModule;
    const { items } = (await rawGet(serve.url, api(DEMO_ORG_ID, "contents"), DEMO_READ_KEY)) as ContentList;
    const blocks = (await rawGet(serve.url, api(DEMO_ORG_ID, "blocks"), DEMO_READ_KEY)) as { items: { id: string; slug: string }[] };
    const post = items[0]!;
    const block = blocks.items[0]!;
    const paths = [
      ...["organization", "contents", "blocks", "categories", `contents/${post.id}`, `contents/${post.id}/references`, `blocks/${block.id}`],
      ...[`contents/by-slug/${post.slug}`, `blocks/by-slug/${block.slug}`],
    ].map((rest) => api(DEMO_ORG_ID, rest));
    for (const apiPath of paths) {
      const res = await call(serve.url, apiPath, { key: DEMO_READ_KEY });
      expect(res.status).toBe(200);
      const cacheTags = res.headers.get("cache-tag")!.split(",");
      // Cache-Tag: org:<id>, the answer's own tag, then a post's category; a by-slug path names no id.
      const known = apiPath.includes("/by-slug/") ? cacheTags.slice(0, 1) : cacheTags.slice(0, 2);
      expect(tagsOf(apiPath), apiPath).toEqual([apiPath, ...known]);
    }
  });
});
