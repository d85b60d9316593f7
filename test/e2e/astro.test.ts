/**
 * `@cdsnap/astro` in a real Astro site: the working tree copied as a clone has
 * it, both packages packed there (`npm pack -w …`), examples/astro-site copied
 * into an empty folder and installed with the two tarballs, and `astro build`
 * run against a real served demo site whose access log counts what each build
 * fetched. The first build fetches every answer once; after one post's title
 * is edited and the site rebuilt, the next fetches the list and that post
 * only; after an edit to its body alone, that post only; a post deleted from
 * the site is gone from the build after. The built site, served by its own
 * Node adapter, is looked at in headless Chromium, and its live page shows an
 * edit before any Astro build, tagged with the API's `Cache-Tag`. The packed
 * declarations are checked by tsc against the real Astro's types: the schemas
 * infer the client's types, and the loaders are what `defineCollection` and
 * `defineLiveCollection` take.
 *
 * Without Chromium the browser part is skipped on a developer machine (saying
 * so) and fails in CI (`CI` or `CDSNAP_E2E_REQUIRED` set).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { decodeHTML } from "entities";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContentList, Organization } from "../../src/client/api-types.js";
import { DEMO_ORG_ID, DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { buildFixture, removeFixture } from "../fixtures/build-fixture.js";
import { CHROMIUM_REQUIRED, HAVE_CHROMIUM, launchChromium, warnIfNoChromium } from "../fixtures/chromium.js";
import { copyWorkingTree, ok, packTarball, PACK_TIMEOUT_MS, run, STEP_TIMEOUT_MS, userEnv } from "../fixtures/pack.js";
import { DEMO_CONTENT, REPO_ROOT } from "../fixtures/repo.js";
import { makeSite, serveSite, type Served, type Site } from "../fixtures/served-site.js";

warnIfNoChromium("the Astro site in a browser");

const EDITED = {
  file: "demo/2026/notes-from-the-cupping-table.md",
  id: "post-0012",
  slug: "notes-from-the-cupping-table",
  before: "Notes from the cupping table",
  title: "Cupping notes, rebuilt",
  addedParagraph: "A paragraph added at the end, after the first build.",
};
const DELETED = { file: "demo/2025/a-day-on-the-roaster.md", slug: "a-day-on-the-roaster" };

let dir: string;
let project: string;
let tarballs: Record<"client" | "astro", string>;
let site: Site;
let served: Served;
let astroEnv: NodeJS.ProcessEnv;
const api = (rest: string) => `/api/organizations/${DEMO_ORG_ID}/${rest}`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-astro-"));
  const source = path.join(dir, "source");
  const packs = path.join(dir, "packed");
  project = path.join(dir, "site");
  await mkdir(packs);
  await copyWorkingTree(source);
  let started = performance.now();
  // Side by side: each prepack is a bundle and a TypeScript program of its own.
  const [client, astro] = await Promise.all([packTarball(source, packs, "client"), packTarball(source, packs, "astro")]);
  tarballs = { client, astro };
  console.log(`@cdsnap/astro: npm pack of both packages took ${seconds(started)}`);

  await cp(path.join(source, "examples/astro-site"), project, { recursive: true });
  started = performance.now();
  await ok(project, "npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarballs.client, tarballs.astro], STEP_TIMEOUT_MS);
  console.log(`@cdsnap/astro: npm install of examples/astro-site with both tarballs took ${seconds(started)}`);

  site = await makeSite({ built: false });
  // A copy of the demo's posts, so that one can be edited and another deleted.
  site.content = path.join(site.dir, "content");
  await cp(DEMO_CONTENT, site.content, { recursive: true });
  await buildFixture(site);
  served = await serveSite(site);
  // Astro would send telemetry: the test runs offline.
  astroEnv = { CDSNAP_URL: served.url, CDSNAP_READ_KEY: DEMO_READ_KEY, CDSNAP_ORG_ID: DEMO_ORG_ID, ASTRO_TELEMETRY_DISABLED: "1" };
}, PACK_TIMEOUT_MS + 2 * STEP_TIMEOUT_MS);

let astroServer: AstroServer | undefined;
/** The server of the first build's output, started by whichever test needs it first. */
async function astroServerStarted(): Promise<AstroServer> {
  astroServer ??= await startAstroServer();
  return astroServer;
}
let browser: BrowserContext | undefined;
afterAll(async () => {
  await browser?.close();
  await astroServer?.stop();
  await served?.close();
  await removeFixture(site);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

/** `astro build` in the project; each path the server answered 200 meanwhile, with how many times, and those it answered 304. */
async function astroBuild(label: string): Promise<{ fetched: Record<string, number>; notModified: string[] }> {
  const from = served.logs.length;
  const started = performance.now();
  await ok(project, process.execPath, [path.join(project, "node_modules/astro/astro.js"), "build"], STEP_TIMEOUT_MS, astroEnv);
  console.log(`@cdsnap/astro: astro build (${label}) took ${seconds(started)}`);
  const fetched: Record<string, number> = {};
  const notModified: string[] = [];
  for (const line of served.logs.slice(from)) {
    if (line.status === 200) fetched[line.path as string] = (fetched[line.path as string] ?? 0) + 1;
    else if (line.status === 304) notModified.push(line.path as string);
    else throw new Error(`the build got ${line.status as number} for ${line.path as string}`);
  }
  return { fetched, notModified };
}

async function read<T>(rest: string): Promise<T> {
  const res = await fetch(served.url + api(rest), { headers: { "x-api-key": DEMO_READ_KEY } });
  if (res.status !== 200) throw new Error(`GET ${rest}: ${res.status}`);
  return (await res.json()) as T;
}

const built = (page: string) => readFile(path.join(project, "dist/client", page, "index.html"), "utf8");
const h1Of = (html: string) => {
  const text = /<h1>([^<]*)<\/h1>/.exec(html)?.[1];
  return text === undefined ? undefined : decodeHTML(text);
};
/** The home page's links to posts, in its order. */
const postLinks = (html: string) =>
  [...html.matchAll(/<a href="\/posts\/([^/"]+)\/">([^<]*)<\/a>/g)].map(([, slug, title]) => ({ slug: slug!, title: decodeHTML(title!) }));

async function rebuildSite(change: (content: string) => Promise<void>): Promise<void> {
  await change(site.content);
  await buildFixture(site);
}

interface AstroServer {
  url: string;
  stop(): Promise<void>;
}

/** The built site as the example's `npm start` serves it: the Node adapter's server, on a free port. */
async function startAstroServer(): Promise<AstroServer> {
  const child: ChildProcess = spawn(process.execPath, ["dist/server/entry.mjs"], {
    cwd: project,
    env: { ...userEnv(), ...astroEnv, HOST: "127.0.0.1", PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the Astro server printed no address: ${output}`)), 30_000);
    const look = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!.replace(/\/$/, ""));
      }
    };
    child.stdout!.on("data", look);
    child.stderr!.on("data", look);
    void exited.then(() => reject(new Error(`the Astro server exited: ${output}`)));
  });
  try {
    return { url: await url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

describe("the @cdsnap/astro tarball", () => {
  it("holds the bundle and its declarations, and names astro and @cdsnap/client as peers, nothing else", async () => {
    const files = (await ok(dir, "tar", ["-tzf", tarballs.astro])).split("\n").filter(Boolean);
    const declarations = ["index", "live", "loaders", "pool", "schemas"].map((name) => `dist/${name}.d.ts`);
    const expected = ["README.md", "package.json", "dist/index.js", "dist/index.js.map", ...declarations];
    expect(files.map((name) => name.replace(/^package\//, "")).sort()).toEqual(expected.sort());
    const packed = JSON.parse(await ok(dir, "tar", ["-xzOf", tarballs.astro, "package/package.json"])) as Record<string, unknown>;
    expect(packed).toMatchObject({ name: "@cdsnap/astro", type: "module" });
    expect(Object.keys(packed.peerDependencies as object).sort()).toEqual(["@cdsnap/client", "astro"]);
    for (const field of ["dependencies", "optionalDependencies", "bundleDependencies"]) expect(packed[field]).toBeUndefined();
    // Astro's zod and the site's client are imported, never bundled: one copy of each in the site.
    const bundle = await readFile(path.join(project, "node_modules/@cdsnap/astro/dist/index.js"), "utf8");
    expect([...bundle.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]).sort()).toEqual(["@cdsnap/client", "astro/zod"]);
    expect(bundle).not.toMatch(/class ZodError|function createClient/);
    expect(existsSync(path.join(project, "node_modules/@cdsnap/astro/node_modules"))).toBe(false);
  });
});

describe("examples/astro-site built with @cdsnap/astro against a served demo", () => {
  let posts: ContentList["items"];
  let organization: Organization;

  it("the first build fetches each answer once, and its pages show the organization and every post", async () => {
    posts = (await read<ContentList>("contents")).items;
    organization = await read<Organization>("organization");
    const { fetched, notModified } = await astroBuild("first");
    const expected: Record<string, number> = { [api("contents")]: 1, [api("organization")]: 1, [api("categories")]: 1, [api("blocks")]: 1 };
    for (const post of posts) expected[api(`contents/${post.id}`)] = 1;
    expect(fetched).toEqual(expected);
    expect(notModified).toEqual([]);

    const home = await built("");
    expect(h1Of(home)).toBe(organization.name);
    expect(postLinks(home)).toEqual(posts.map((post) => ({ slug: post.slug, title: post.title })));
    expect(h1Of(await built(`posts/${EDITED.slug}`))).toBe(EDITED.before);
  });

  it("the packed types, checked by tsc with the real Astro: the schemas infer the client's types, the loaders fit Astro's", async () => {
    await writeFile(
      path.join(project, "types-check.ts"),
      `import * as cdsnap from "@cdsnap/astro";
import type { Block, Category, ContentDetail, ContentSummary, Field, Organization, Reference } from "@cdsnap/client";
import type { LiveLoader, Loader } from "astro/loaders";
import type { z } from "astro/zod";
import type { CollectionEntry, getLiveEntry } from "astro:content";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function holds<T extends true>(): void;
const cms = { baseUrl: "https://cdn.example.com", apiKey: "key", orgId: "demo" };

holds<Equal<z.infer<typeof cdsnap.fieldSchema>, Field>>();
holds<Equal<z.infer<typeof cdsnap.blockSchema>, Block>>();
holds<Equal<z.infer<typeof cdsnap.organizationSchema>, Organization>>();
holds<Equal<z.infer<typeof cdsnap.referenceSchema>, Reference>>();
holds<Equal<z.infer<typeof cdsnap.contentSummarySchema>, ContentSummary>>();
holds<Equal<z.infer<typeof cdsnap.contentDetailSchema>, ContentDetail>>();
holds<Equal<z.infer<typeof cdsnap.categorySchema>, Category>>();

export const loaders: Loader[] = [
  cdsnap.cdsnapPosts(cms),
  cdsnap.cdsnapBlocks({ ...cms, pages: ["home"] }),
  cdsnap.cdsnapCategories(cms),
  cdsnap.cdsnapOrganization(cms),
];
type PostLookup = { id: string } | { slug: string };
export const livePosts: LiveLoader<ContentDetail, PostLookup> = cdsnap.cdsnapLivePosts(cms);
export const liveSummaries: LiveLoader<ContentSummary, PostLookup> = cdsnap.cdsnapLivePostSummaries(cms);
export const liveOrganization: LiveLoader<Organization, { id: string }> = cdsnap.cdsnapLiveOrganization(cms);

// What the example's collections hold, as Astro generated their types in the build.
holds<Equal<CollectionEntry<"posts">["data"], ContentDetail>>();
holds<Equal<CollectionEntry<"homeBlocks">["data"], Block>>();
holds<Equal<CollectionEntry<"organization">["data"], Organization>>();
holds<Equal<NonNullable<Awaited<ReturnType<typeof getLiveEntry<"livePosts">>>["entry"]>["data"], ContentDetail>>();
`,
    );
    const tsc = path.join(REPO_ROOT, "node_modules/typescript/bin/tsc");
    const started = performance.now();
    const result = await run(project, process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"]);
    console.log(`@cdsnap/astro: tsc on the site took ${seconds(started)}`);
    expect(result.stdout + result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  describe.skipIf(!HAVE_CHROMIUM && !CHROMIUM_REQUIRED)("in headless Chromium", () => {
    it("served by its Node adapter, the site shows the organization and the posts, a post's page, and its live page with the API's cache tags", async () => {
      const { url } = await astroServerStarted();
      browser = await launchChromium(path.join(dir, "profile"));
      const page = await browser.newPage();
      await page.goto(`${url}/`);
      expect(await page.locator("h1").textContent()).toBe(organization.name);
      expect(await page.locator("#posts li a").allTextContents()).toEqual(posts.map((post) => post.title));

      await page.locator("#posts a", { hasText: EDITED.before }).click();
      await page.waitForURL(`${url}/posts/${EDITED.slug}/`);
      expect(await page.locator("article h1").textContent()).toBe(EDITED.before);
      expect(await page.title()).toBe(`${EDITED.before} · ${organization.name}`);

      const live = await page.goto(`${url}/live/${EDITED.slug}`);
      expect(live?.status()).toBe(200);
      const tags = live?.headers()["cache-tag"]?.split(",");
      expect(tags).toEqual(expect.arrayContaining([`org:${DEMO_ORG_ID}`, `content:${DEMO_ORG_ID}/${EDITED.id}`]));
      expect(await page.locator("article h1").textContent()).toBe(EDITED.before);

      await page.locator("#site-name").click();
      await page.waitForURL(`${url}/`);
      expect(await page.locator("#posts li").count()).toBe(posts.length);
    });
  });

  it("the live page shows an edit as soon as the cdsnap site is rebuilt, before any Astro build; the built page does not", async () => {
    const { url } = await astroServerStarted();
    await rebuildSite(async (content) => {
      const file = path.join(content, EDITED.file);
      await writeFile(file, (await readFile(file, "utf8")).replace(`title: ${EDITED.before}`, `title: ${EDITED.title}`));
    });
    const live = await fetch(`${url}/live/${EDITED.slug}`);
    expect(live.status).toBe(200);
    expect(live.headers.get("cache-tag")?.split(",")).toContain(`content:${DEMO_ORG_ID}/${EDITED.id}`);
    expect(h1Of(await live.text())).toBe(EDITED.title);
    expect(h1Of(await (await fetch(`${url}/posts/${EDITED.slug}/`)).text())).toBe(EDITED.before);
    expect((await fetch(`${url}/live/no-such-post`)).status).toBe(404);
    // Its work is done: the builds that follow get both cores.
    await astroServer!.stop();
  });

  it("the next build fetches the list and the edited post, and asks again for everything else, which is unchanged", async () => {
    const answered = await astroBuild("after an edit");
    expect(answered.fetched).toEqual({ [api("contents")]: 1, [api(`contents/${EDITED.id}`)]: 1 });
    const others = posts.filter((post) => post.id !== EDITED.id).map((post) => api(`contents/${post.id}`));
    expect(answered.notModified.sort()).toEqual([api("organization"), api("categories"), api("blocks"), ...others].sort());
    expect(h1Of(await built(`posts/${EDITED.slug}`))).toBe(EDITED.title);
    expect(postLinks(await built(""))).toContainEqual({ slug: EDITED.slug, title: EDITED.title });
    // Every other post's page is still there, built from the entry kept from the first build.
    for (const post of posts) expect(existsSync(path.join(project, "dist/client/posts", post.slug, "index.html"))).toBe(true);
  });

  it("a post whose body alone changed is fetched again while the list answers 304", async () => {
    await rebuildSite(async (content) => {
      const file = path.join(content, EDITED.file);
      await writeFile(file, `${await readFile(file, "utf8")}\n${EDITED.addedParagraph}\n`);
    });
    const answered = await astroBuild("after a body edit");
    expect(answered.fetched).toEqual({ [api(`contents/${EDITED.id}`)]: 1 });
    expect(answered.notModified).toContain(api("contents"));
    expect(await built(`posts/${EDITED.slug}`)).toContain(`<p>${EDITED.addedParagraph}</p>`);
  });

  it("a post deleted from the cdsnap site disappears from the next build, which fetches only the list", async () => {
    await rebuildSite((content) => rm(path.join(content, DELETED.file)));
    expect((await astroBuild("after a deletion")).fetched).toEqual({ [api("contents")]: 1 });
    expect(existsSync(path.join(project, "dist/client/posts", DELETED.slug))).toBe(false);
    const links = postLinks(await built(""));
    expect(links.map((link) => link.slug).sort()).toEqual(posts.map((post) => post.slug).filter((slug) => slug !== DELETED.slug).sort());
  });
});
