/**
 * The cached GET path: a file is answered from memory once read, yet never
 * stale and never through a link. A file replaced by rename, a new generation
 * swapped in, a file or folder turned into a link while the cache is warm: the
 * next request sees it. And the answer carries one set of headers: the same for
 * 200 and HEAD, HEAD without a body, Range ignored (the whole 200).
 */
import { cp, lstat, mkdir, readFile, rename, rm, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { generation, liveGenerationSync, nextGenerationId, swapTo, treeStoreOf, type Generation } from "../../src/emit/tree-store.js";
import { CACHE_CONTROL } from "../../src/api-http.js";
import { DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { sha256Hex } from "../fixtures/tree.js";
import { type Served, startSite } from "../fixtures/served-site.js";
import { api, JSON_TYPE, rawExchange } from "../fixtures/http.js";

type Site = Served & { stop(): Promise<void> };

const POST = api("demo", "contents/post-0011");
const BY_SLUG = api("demo", "contents/by-slug/aeropress-recipes");
const CANARY = "CANARY-7d0e5c1b-outside-the-tree";

interface Wire {
  status: string;
  /** Lower-cased names, in the order sent. */
  headers: [string, string][];
  body: Buffer;
}

/** One request on its own connection (closed after it), and every byte the server wrote. */
async function exchange(site: Site, method: string, target: string, extra: Record<string, string> = {}): Promise<Wire> {
  const lines = [`${method} ${target} HTTP/1.1`, "Host: test", `x-api-key: ${DEMO_READ_KEY}`];
  for (const [name, value] of Object.entries(extra)) lines.push(`${name}: ${value}`);
  const wire = await rawExchange(site.url, `${lines.join("\r\n")}\r\nConnection: close\r\n\r\n`);
  const split = wire.indexOf("\r\n\r\n");
  expect(split).toBeGreaterThan(0);
  const [status, ...fields] = wire.subarray(0, split).toString("latin1").split("\r\n");
  return {
    status: status!,
    headers: fields.map((f) => [f.slice(0, f.indexOf(":")).toLowerCase(), f.slice(f.indexOf(":") + 1).trim()]),
    body: wire.subarray(split + 4),
  };
}

const get = (site: Site, target: string, extra?: Record<string, string>) => exchange(site, "GET", target, extra);
const header = (wire: Wire, name: string) => wire.headers.find(([n]) => n === name)?.[1];
const withoutDate = (wire: Wire) => wire.headers.filter(([name]) => name !== "date");

/** The live file that answers an API path. */
function liveFile(site: Site, apiPath: string): string {
  const gen = liveGenerationSync(treeStoreOf(site.out));
  if (!gen) throw new Error("the site has no live generation");
  return path.join(gen.tree, `${apiPath.slice(1)}.json`);
}

/** Replaces a file the way the build and the write proxy do: a new file renamed over it. */
async function replaceByRename(file: string, bytes: Buffer, mtime?: Date): Promise<void> {
  const temp = `${file}.next`;
  await writeFile(temp, bytes);
  if (mtime) await utimes(temp, mtime, mtime);
  await rename(temp, file);
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8");

/** The post's detail under another title: bytes of its own that are still an answer the document allows. */
async function retitled(site: Site, title: string): Promise<Buffer> {
  return json({ ...(JSON.parse(await readFile(liveFile(site, POST), "utf8")) as object), title });
}

describe("the answer of a cached file", () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite();
  });
  afterAll(() => site?.stop());

  const PLAIN_200 = [
    "access-control-allow-origin",
    "access-control-expose-headers",
    "vary",
    "x-content-type-options",
    "etag",
    "cache-control",
    "cache-tag",
    "content-length",
    "accept-ranges",
    "last-modified",
    "content-type",
    "date",
    "connection",
  ];

  it("a plain 200 carries exactly the expected headers, in order, and the file's bytes, cold and warm", async () => {
    const file = liveFile(site, POST);
    const bytes = await readFile(file);
    const { mtime } = await lstat(file);
    const cold = await get(site, POST);
    const warm = await get(site, POST);
    for (const res of [cold, warm]) {
      expect(res.status).toBe("HTTP/1.1 200 OK");
      expect(res.headers.map(([name]) => name)).toEqual(PLAIN_200);
      expect(Object.fromEntries(withoutDate(res))).toEqual({
        "access-control-allow-origin": "*",
        "access-control-expose-headers": "ETag, Retry-After, Cache-Tag",
        vary: "x-api-key, Origin, Accept-Encoding",
        "x-content-type-options": "nosniff",
        etag: `"${sha256Hex(bytes)}"`,
        "cache-control": CACHE_CONTROL,
        "cache-tag": "org:demo,content:demo/post-0011,category:demo/brewing",
        "content-length": String(bytes.length),
        "accept-ranges": "none",
        "last-modified": mtime.toUTCString(),
        "content-type": JSON_TYPE,
        connection: "close",
      });
      expect(res.body.equals(bytes)).toBe(true);
    }
  });

  it("HEAD answers exactly the headers of GET and no body, cold and warm", async () => {
    for (const target of [BY_SLUG, BY_SLUG, api("demo", "blocks?pages=home")]) {
      const head = await exchange(site, "HEAD", target);
      const full = await get(site, target);
      expect(head.status).toBe("HTTP/1.1 200 OK");
      expect(withoutDate(head)).toEqual(withoutDate(full));
      expect(head.body.length).toBe(0);
      expect(header(head, "content-length")).toBe(String(full.body.length));
    }
  });

  it("a Range request answers the whole 200: the plain GET's headers and bytes", async () => {
    const whole = await get(site, POST);
    for (const range of ["bytes=0-9", "bytes=10-", "bytes=-5", "bytes=3-3"]) {
      const res = await get(site, POST, { Range: range });
      expect(res.status, range).toBe("HTTP/1.1 200 OK");
      // Nothing after the document: the connection carries no stray bytes into a next answer.
      expect(res.body.equals(whole.body), range).toBe(true);
      expect(withoutDate(res), range).toEqual(withoutDate(whole));
    }
  });

  it("a Range request with the current ETag in If-None-Match still answers 304", async () => {
    const etag = header(await get(site, POST), "etag")!;
    const res = await get(site, POST, { Range: "bytes=0-9", "If-None-Match": etag });
    expect(res.status).toBe("HTTP/1.1 304 Not Modified");
    expect(res.body.length).toBe(0);
  });
});

describe("a warm cache never answers stale bytes", () => {
  let site: Site | undefined;
  afterEach(async () => {
    await site?.stop();
    site = undefined;
  });

  it("a file replaced by rename is served fresh on the next request: new bytes, new ETag", async () => {
    site = await startSite();
    const file = liveFile(site, POST);
    const old = await get(site, POST);
    await get(site, POST);
    const next = await retitled(site, "replaced by rename");
    await replaceByRename(file, next);
    const res = await get(site, POST, { "If-None-Match": header(old, "etag")! });
    expect(res.status).toBe("HTTP/1.1 200 OK");
    expect(res.body.equals(next)).toBe(true);
    expect(header(res, "etag")).toBe(`"${sha256Hex(next)}"`);
    expect(header(res, "content-length")).toBe(String(next.length));
  });

  it("a replacement of the same size and modification time is noticed too (another inode)", async () => {
    site = await startSite();
    const file = liveFile(site, POST);
    const when = new Date("2026-03-04T05:06:07Z");
    const first = await retitled(site, "aaaa");
    const second = await retitled(site, "bbbb");
    await replaceByRename(file, first, when);
    expect((await get(site, POST)).body.equals(first)).toBe(true);
    expect((await get(site, POST)).body.equals(first)).toBe(true);
    await replaceByRename(file, second, when);
    const res = await get(site, POST);
    expect(res.body.equals(second)).toBe(true);
    expect(header(res, "etag")).toBe(`"${sha256Hex(second)}"`);
  });

  it("a file removed from the live tree answers 404 on the next request", async () => {
    site = await startSite();
    await get(site, POST);
    await rm(liveFile(site, POST));
    expect((await get(site, POST)).status).toBe("HTTP/1.1 404 Not Found");
  });

  it("a new generation swapped in is served on the next request, and the old one when swapped back", async () => {
    site = await startSite();
    const store = treeStoreOf(site.out);
    const first = liveGenerationSync(store)!;
    const before = await get(site, POST);
    const org = await get(site, api("demo", "organization"));
    await get(site, POST);

    const second: Generation = generation(store, await nextGenerationId(store));
    await cp(first.dir, second.dir, { recursive: true });
    const next = await retitled(site, `generation ${second.id}`);
    await writeFile(path.join(second.tree, `${POST.slice(1)}.json`), next);
    await swapTo(store, second);

    const after = await get(site, POST);
    expect(after.body.equals(next)).toBe(true);
    expect(header(after, "etag")).toBe(`"${sha256Hex(next)}"`);
    // An unchanged file of the new generation: other inode, same bytes, same ETag.
    const orgAfter = await get(site, api("demo", "organization"));
    expect(orgAfter.body.equals(org.body)).toBe(true);
    expect(header(orgAfter, "etag")).toBe(header(org, "etag"));

    await swapTo(store, first);
    const back = await get(site, POST);
    expect(back.body.equals(before.body)).toBe(true);
    expect(header(back, "etag")).toBe(header(before, "etag"));
  });

  it("a cached file replaced by a link to outside the tree answers 404, never the link's target", async () => {
    site = await startSite();
    const canary = path.join(site.dir, "canary.json");
    await writeFile(canary, JSON.stringify({ canary: CANARY }));
    const file = liveFile(site, POST);
    await get(site, POST);
    await get(site, POST);
    await symlink(canary, `${file}.link`);
    await rename(`${file}.link`, file);
    const res = await get(site, POST);
    expect(res.status).toBe("HTTP/1.1 404 Not Found");
    expect(res.body.toString("utf8")).not.toContain(CANARY);
  });

  it("a folder of the tree replaced by a link to a folder outside it is not followed, cache warm", async () => {
    site = await startSite();
    const file = liveFile(site, BY_SLUG);
    const folder = path.dirname(file);
    await get(site, BY_SLUG);
    await get(site, BY_SLUG);
    const outside = path.join(site.dir, "elsewhere");
    await mkdir(outside);
    await writeFile(path.join(outside, path.basename(file)), JSON.stringify({ canary: CANARY }));
    await rename(folder, `${folder}.moved`);
    await symlink(outside, folder);
    const res = await get(site, BY_SLUG);
    expect(res.status).toBe("HTTP/1.1 404 Not Found");
    expect(res.body.toString("utf8")).not.toContain(CANARY);
  });
});
