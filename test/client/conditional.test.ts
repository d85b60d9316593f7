/**
 * Conditional requests and what an answer says about itself, as a frontend's
 * incremental sync uses them (an Astro loader, a static site generator): keep
 * each answer's ETag beside its data, send it back as `ifNoneMatch`, and fetch
 * a body only for what changed. Through a real `cdsnap serve`, whose access
 * log counts what it sent.
 */
import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import {
  createClient,
  isNotModified,
  type Answer,
  type CdsnapClient,
  type Fresh,
  type ContentDetail,
  type ContentList,
  type NotModified,
} from "../../src/client/index.js";
import { DEMO_ORG_ID, DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { buildFixture, removeFixture } from "../fixtures/build-fixture.js";
import { rawRequest } from "../fixtures/http.js";
import { DEMO_CONTENT } from "../fixtures/repo.js";
import { makeSite, serveSite, type Served, type Site } from "../fixtures/served-site.js";

let site: Site;
let served: Served;
let cms: CdsnapClient;

beforeAll(async () => {
  site = await makeSite({ built: false });
  // A copy of the demo's posts, so that one can be edited and built again.
  site.content = path.join(site.dir, "content");
  await cp(DEMO_CONTENT, site.content, { recursive: true });
  await buildFixture(site);
  served = await serveSite(site);
  cms = createClient({ baseUrl: served.url, apiKey: DEMO_READ_KEY, orgId: DEMO_ORG_ID });
});
afterAll(async () => {
  await served?.close();
  await removeFixture(site);
});

const api = (rest: string) => `/api/organizations/${DEMO_ORG_ID}/${rest}`;

/** The access log's lines from `from` on, as `status path`. */
const answeredSince = (from: number) => served.logs.slice(from).map((line) => `${line.status as number} ${line.path as string}`);

describe("an answer's meta", () => {
  it("is the ETag, Cache-Tag and Last-Modified the server sent, beside the data", async () => {
    const answer = await cms.withMeta.content("post-0001");
    // Typed Fresh: a call without ifNoneMatch has no NotModified to tell apart.
    expectTypeOf(answer).toEqualTypeOf<Fresh<ContentDetail>>();
    expectTypeOf(await cms.withMeta.content("post-0001", { ifNoneMatch: "x" })).toEqualTypeOf<Answer<ContentDetail>>();
    const raw = await rawRequest(served.url, { path: api("contents/post-0001"), headers: { "x-api-key": DEMO_READ_KEY } });
    expect(answer.data).toEqual(JSON.parse(raw.body.toString("utf8")));
    expect(answer.meta.status).toBe(200);
    // The raw request took no coding; Node's fetch took br or gzip, which the ETag names.
    expect(answer.meta.etag?.replace(/-(br|gzip)"$/, '"')).toBe(raw.headers.etag);
    expect(answer.meta.cacheTags).toEqual(String(raw.headers["cache-tag"]).split(","));
    expect(answer.meta.cacheTags).toContain(`content:${DEMO_ORG_ID}/post-0001`);
    expect(answer.meta.lastModified?.toUTCString()).toBe(raw.headers["last-modified"]);
  });

  it("names the coding of a compressed answer in its ETag, and that ETag still matches the same bytes", async () => {
    // Node's fetch asks for br and gzip, and decodes what comes: the contents list is large enough to be compressed.
    const first = await cms.withMeta.contents();
    expect(first.meta.etag).toMatch(/^"[0-9a-f]{64}-(br|gzip)"$/);
    const again = await cms.withMeta.contents({ ifNoneMatch: first.meta.etag! });
    expect(again).toEqual({ notModified: true, meta: expect.objectContaining({ status: 304, etag: first.meta.etag }) });
  });

  it("of a PATCH is the organization's new ETag, ready for the next ifMatch", async () => {
    const writer = createClient({ baseUrl: served.url, apiKey: DEMO_WRITE_KEY, orgId: DEMO_ORG_ID });
    const before = await writer.organizationWithEtag();
    const written = await writer.withMeta.updateBusinessDescription(`${before.data.businessDescription} (meta)`, { ifMatch: before.etag! });
    expect(written.data.businessDescription).toBe(`${before.data.businessDescription} (meta)`);
    const after = await writer.organizationWithEtag();
    expect(written.meta.etag).toBe(after.etag);
    expect(written.meta.etag).not.toBe(before.etag);
    await writer.updateBusinessDescription(before.data.businessDescription, { ifMatch: written.meta.etag! });
  });
});

describe("ifNoneMatch", () => {
  it("resolves with NotModified, typed as such only when the call may send one, and the server sends no body", async () => {
    const first = await cms.withMeta.content("post-0002");
    const from = served.logs.length;
    const plain = await cms.content("post-0002", { ifNoneMatch: first.meta.etag! });
    expectTypeOf(plain).toEqualTypeOf<ContentDetail | NotModified>();
    expect(isNotModified(plain)).toBe(true);
    expect(answeredSince(from)).toEqual([`304 ${api("contents/post-0002")}`]);

    expectTypeOf(await cms.content("post-0002")).toEqualTypeOf<ContentDetail>();
    expectTypeOf(await cms.content("post-0002", { signal: new AbortController().signal })).toEqualTypeOf<ContentDetail>();
    expectTypeOf(await cms.contents({ ifNoneMatch: undefined as string | undefined })).toEqualTypeOf<ContentList | NotModified>();
  });

  it("an ETag that no longer matches gets the data as if none were sent", async () => {
    const answer = await cms.content("post-0002", { ifNoneMatch: `"${"0".repeat(64)}"` });
    expect(isNotModified(answer)).toBe(false);
    expect((answer as ContentDetail).id).toBe("post-0002");
  });

  it("a second sync of every post fetches the body of only the post edited and built since", async () => {
    /** One sync: the list, then each post's detail, each sent with the ETag kept from the sync before. */
    const kept = new Map<string, { etag: string; data: unknown }>();
    async function sync(): Promise<string[]> {
      const from = served.logs.length;
      const list = await cms.withMeta.contents({ ifNoneMatch: kept.get("list")?.etag });
      if (!list.notModified) kept.set("list", { etag: list.meta.etag!, data: list.data });
      const items = (kept.get("list")!.data as ContentList).items;
      for (const item of items) {
        const detail = await cms.withMeta.content(item.id, { ifNoneMatch: kept.get(item.id)?.etag });
        if (!detail.notModified) kept.set(item.id, { etag: detail.meta.etag!, data: detail.data });
      }
      return answeredSince(from).filter((line) => line.startsWith("200 "));
    }

    const first = await sync();
    const posts = (kept.get("list")!.data as ContentList).items;
    expect(first).toHaveLength(1 + posts.length);
    expect(await sync()).toEqual([]);

    const file = path.join(site.content, "demo/2026/notes-from-the-cupping-table.md");
    await writeFile(file, (await readFile(file, "utf8")).replace("title: Notes from the cupping table", "title: Cupping notes, synced"));
    await buildFixture(site);
    // The title shows in the list too: the list and that one post, nothing else.
    expect((await sync()).sort()).toEqual([`200 ${api("contents")}`, `200 ${api("contents/post-0012")}`]);
    expect((kept.get("post-0012")!.data as ContentDetail).title).toBe("Cupping notes, synced");
  });
});

describe("a 304 the call did not ask for", () => {
  it("is a bad_response, not data nor NotModified", async () => {
    const client = createClient({
      baseUrl: "http://cdn.invalid",
      apiKey: DEMO_READ_KEY,
      orgId: DEMO_ORG_ID,
      fetch: async () => ({ status: 304, headers: new Headers({ etag: '"x"' }), text: async () => "" }),
    });
    await expect(client.content("post-0001")).rejects.toMatchObject({ code: "bad_response", status: 304 });
  });
});
