/**
 * Compressed answers: br or gzip as the request's Accept-Encoding allows (its
 * q-values honoured), the same bytes once decoded, an ETag per coding that any
 * of the file's ETags revalidates, `Vary: …, Accept-Encoding` on every file
 * answer, HEAD as GET, `?pages=` answers and files the write proxy rewrites
 * compressed afresh. Requests go through node:http, which sends exactly the
 * Accept-Encoding given and decodes nothing (fetch adds its own and decodes).
 */
import { readFile } from "node:fs/promises";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { api, rawRequest, type RawResponse } from "../fixtures/http.js";
import { startSite, type StartedSite } from "../fixtures/served-site.js";
import { organizationFile, sha256Hex } from "../fixtures/tree.js";
import { liveGenerationSync, treeStoreOf } from "../../src/emit/tree-store.js";
import path from "node:path";

const CONTENTS = api("demo", "contents");
const ORG = api("demo", "organization");
const CATEGORIES = api("demo", "categories");
const FILE_VARY = "x-api-key, Origin, Accept-Encoding";

let site: StartedSite;
beforeAll(async () => {
  site = await startSite({ writeRate: 100_000 });
});
afterAll(() => site?.stop());

function get(target: string, headers: Record<string, string> = {}, method = "GET"): Promise<RawResponse> {
  return rawRequest(site.url, { method, path: target, headers: { "x-api-key": DEMO_READ_KEY, ...headers } });
}

/** The body as a client decodes it, by the answer's Content-Encoding. */
function decoded(res: RawResponse): Buffer {
  const coding = res.headers["content-encoding"];
  if (coding === "br") return brotliDecompressSync(res.body);
  if (coding === "gzip") return gunzipSync(res.body);
  expect(coding).toBeUndefined();
  return res.body;
}

async function liveBytes(apiPath: string): Promise<Buffer> {
  const gen = liveGenerationSync(treeStoreOf(site.out))!;
  return readFile(path.join(gen.tree, `${apiPath.slice(1)}.json`));
}

function patchDescription(text: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const body = JSON.stringify({ businessDescription: text });
  return rawRequest(site.url, {
    method: "PATCH",
    path: api("demo", "business-description"),
    headers: { "x-api-key": DEMO_WRITE_KEY, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers },
    chunks: [body],
  });
}

describe("the coding of an answer", () => {
  // [Accept-Encoding, the coding answered (null: the file as it is)]
  const cases: [string | undefined, string | null][] = [
    [undefined, null],
    ["", null],
    ["identity", null],
    ["deflate", null],
    ["gzip", "gzip"],
    ["x-gzip", "gzip"],
    ["br", "br"],
    ["gzip, deflate, br", "br"],
    ["GZIP;Q=1", "gzip"],
    ["br;q=0.5, gzip", "gzip"],
    ["br;q=0.8, gzip;q=0.8", "br"],
    ["gzip;q=1.0, br;q=0.999", "gzip"],
    ["br;q=0, gzip;q=0", null],
    ["br;q=0, *", "gzip"],
    ["*", "br"],
    ["*;q=0.5, br;q=0", "gzip"],
    ["identity;q=1, gzip;q=0.5", null],
    ["gzip;q=0.001", "gzip"],
    ["gzip;q=0.5, identity;q=0.6", null],
    ["deflate;q=0.5, gzip;q=0.2", "gzip"],
    ["br;q=2, gzip", "gzip"],
    // Nothing acceptable, identity refused too: the header is disregarded rather than answered 406.
    ["identity;q=0", null],
  ];

  it("is br or gzip by Accept-Encoding, q-values honoured, and decodes to the file byte for byte", async () => {
    const file = await liveBytes(CONTENTS);
    expect(file.length).toBeGreaterThan(1024);
    for (const [accept, coding] of cases) {
      const res = await get(CONTENTS, accept === undefined ? {} : { "accept-encoding": accept });
      expect(res.status, accept).toBe(200);
      expect(res.headers["content-encoding"] ?? null, accept).toBe(coding);
      expect(res.headers["content-length"], accept).toBe(String(res.body.length));
      expect(res.headers.vary, accept).toBe(FILE_VARY);
      expect(decoded(res).equals(file), accept).toBe(true);
      if (coding !== null) expect(res.body.length, accept).toBeLessThan(file.length / 2);
    }
  });

  it("gives each coding a strong ETag of its own, named after the file's", async () => {
    const sha = sha256Hex(await liveBytes(CONTENTS));
    const tags = await Promise.all(["identity", "gzip", "br"].map(async (accept) => (await get(CONTENTS, { "accept-encoding": accept })).headers.etag));
    expect(tags).toEqual([`"${sha}"`, `"${sha}-gzip"`, `"${sha}-br"`]);
  });

  it("answers 304 to any ETag of the file, carrying the ETag of the coding it would have sent", async () => {
    const sha = sha256Hex(await liveBytes(CONTENTS));
    const tags = [`"${sha}"`, `"${sha}-gzip"`, `"${sha}-br"`, `W/"${sha}-br"`, `"stale", "${sha}-gzip"`];
    for (const [accept, expected] of [["identity", `"${sha}"`], ["gzip", `"${sha}-gzip"`], ["br, gzip", `"${sha}-br"`]] as const) {
      for (const tag of tags) {
        const res = await get(CONTENTS, { "accept-encoding": accept, "if-none-match": tag });
        expect(res.status, `${accept} / ${tag}`).toBe(304);
        expect(res.body.length).toBe(0);
        expect(res.headers.etag, `${accept} / ${tag}`).toBe(expected);
        expect(res.headers.vary).toBe(FILE_VARY);
        expect(res.headers["content-encoding"]).toBeUndefined();
      }
    }
    const other = `"${"0".repeat(64)}-br"`;
    expect((await get(CONTENTS, { "accept-encoding": "br", "if-none-match": other })).status).toBe(200);
  });

  it("answers HEAD with the headers of GET in each coding, Content-Length the coded body's, and no body", async () => {
    for (const accept of ["identity", "gzip", "br"]) {
      const full = await get(CONTENTS, { "accept-encoding": accept });
      const head = await get(CONTENTS, { "accept-encoding": accept }, "HEAD");
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      const { date: _a, ...headHeaders } = head.headers;
      const { date: _b, ...fullHeaders } = full.headers;
      expect(headHeaders, accept).toEqual(fullHeaders);
      expect(head.headers["content-length"]).toBe(String(full.body.length));
    }
  });

  it("gives concurrent first requests for a coding the same bytes", async () => {
    const target = api("demo", "blocks");
    const answers = await Promise.all(Array.from({ length: 8 }, () => get(target, { "accept-encoding": "gzip" })));
    const file = await liveBytes(target);
    for (const res of answers) {
      expect(res.headers["content-encoding"]).toBe("gzip");
      expect(res.body.equals(answers[0]!.body)).toBe(true);
      expect(decoded(res).equals(file)).toBe(true);
    }
  });

  it("leaves an answer under 1 KiB as it is, with the same Vary and its one ETag", async () => {
    const file = await liveBytes(CATEGORIES);
    expect(file.length).toBeLessThan(1024);
    const res = await get(CATEGORIES, { "accept-encoding": "br, gzip" });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.body.equals(file)).toBe(true);
    expect(res.headers.etag).toBe(`"${sha256Hex(file)}"`);
    expect(res.headers.vary).toBe(FILE_VARY);
    const again = await get(CATEGORIES, { "accept-encoding": "br", "if-none-match": res.headers.etag! });
    expect(again.status).toBe(304);
    expect(again.headers.etag).toBe(res.headers.etag);
  });

  it("compresses a ?pages= answer, which is computed per request", async () => {
    const target = api("demo", "blocks?pages=home,pricing,about");
    const plain = await get(target, { "accept-encoding": "identity" });
    expect(plain.body.length).toBeGreaterThan(1024);
    expect(plain.body.equals(await liveBytes(api("demo", "blocks")))).toBe(false);
    for (const accept of ["br", "gzip"]) {
      const res = await get(target, { "accept-encoding": accept });
      expect(res.headers["content-encoding"]).toBe(accept);
      expect(decoded(res).equals(plain.body)).toBe(true);
      expect(res.headers.etag).toBe(`${plain.headers.etag!.slice(0, -1)}-${accept}"`);
      expect((await get(target, { "accept-encoding": accept, "if-none-match": plain.headers.etag! })).status).toBe(304);
    }
  });
});

describe("a file the write proxy rewrites", () => {
  it("is compressed afresh after each PATCH, never answered with the bytes of the version before", async () => {
    for (const round of [1, 2, 3]) {
      const text = `Round ${round}: ${Array(30).fill("Small-batch roasting on the waterfront, every morning.").join(" ")}`;
      const patched = await patchDescription(text);
      expect(patched.status).toBe(200);
      const file = await organizationFile(site, "demo");
      expect(file.length).toBeGreaterThan(1024);
      for (const accept of ["br", "gzip"]) {
        const res = await get(ORG, { "accept-encoding": accept });
        expect(res.headers["content-encoding"]).toBe(accept);
        expect(decoded(res).equals(file), `round ${round} ${accept}`).toBe(true);
        expect(JSON.parse(decoded(res).toString("utf8")).businessDescription).toBe(text);
        expect(res.headers.etag).toBe(`"${sha256Hex(file)}-${accept}"`);
      }
    }
  });

  it("takes the ETag of a compressed GET as If-Match, and refuses it once stale", async () => {
    await patchDescription(`Before: ${"x".repeat(1500)}`);
    const read = await get(ORG, { "accept-encoding": "br" });
    expect(read.headers.etag).toMatch(/-br"$/);
    const first = await patchDescription(`After: ${"y".repeat(1500)}`, { "if-match": read.headers.etag! });
    expect(first.status).toBe(200);
    const stale = await patchDescription(`Lost: ${"z".repeat(1500)}`, { "if-match": read.headers.etag! });
    expect(stale.status).toBe(412);
  });
});
