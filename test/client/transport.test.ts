import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CdsnapApiError, createClient, type FetchInitLike, type FetchLike } from "../../src/client/index.js";
import { DEMO_ORG_ID, DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { type StartedSite, startSite } from "../fixtures/served-site.js";

let live: StartedSite;

beforeAll(async () => {
  live = await startSite();
});
afterAll(() => live?.stop());
afterEach(() => {
  vi.unstubAllGlobals();
});

async function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  );
}

/** A fetch that records every call and passes it on to the real one. */
function recordingFetch() {
  const calls: { url: string; init: FetchInitLike }[] = [];
  const fetchImpl: FetchLike = (url, init) => {
    calls.push({ url, init });
    return fetch(url, init);
  };
  return { calls, fetchImpl };
}

/** A fetch that answers every call with this status and body, without a server. */
function cannedFetch(status: number, body: string, contentType = "text/html"): FetchLike {
  return async () => new Response(body, { status, headers: { "content-type": contentType } });
}

describe("the fetch the client uses", () => {
  it("a custom fetch receives every request: URL, method, key, JSON body", async () => {
    const { calls, fetchImpl } = recordingFetch();
    const cms = createClient({ baseUrl: live.url, apiKey: DEMO_WRITE_KEY, orgId: DEMO_ORG_ID, fetch: fetchImpl });

    await cms.blocks({ pages: ["home", "blog"] });
    await cms.contentBySlug("sourcing-ethiopian-yirgacheffe");
    await cms.updateBusinessDescription("Roasted on the waterfront.", { ifMatch: "*" });

    expect(calls.map((c) => `${c.init.method} ${c.url.slice(live.url.length)}`)).toEqual([
      "GET /api/organizations/demo/blocks?pages=home,blog",
      "GET /api/organizations/demo/contents/by-slug/sourcing-ethiopian-yirgacheffe",
      "PATCH /api/organizations/demo/business-description",
    ]);
    expect(calls.every((c) => c.init.headers["x-api-key"] === DEMO_WRITE_KEY)).toBe(true);
    const patch = calls[2]!.init;
    expect(patch.headers).toMatchObject({ "content-type": "application/json", "if-match": "*" });
    expect(JSON.parse(patch.body!)).toEqual({ businessDescription: "Roasted on the waterfront." });
  });

  it("page names and ids are percent-encoded, the commas between page names are not", async () => {
    const { calls, fetchImpl } = recordingFetch();
    const cms = createClient({ baseUrl: live.url, apiKey: DEMO_READ_KEY, orgId: DEMO_ORG_ID, fetch: fetchImpl });
    expect(await cms.blocks({ pages: ["home page", "", "a&b=c"] })).toEqual({ items: [] });
    await rejection(cms.block("a b/c"));
    expect(calls.map((c) => c.url.slice(live.url.length))).toEqual([
      "/api/organizations/demo/blocks?pages=home%20page,a%26b%3Dc",
      "/api/organizations/demo/blocks/a%20b%2Fc",
    ]);
  });

  it("the default is the global fetch, called on globalThis as a browser's window.fetch requires", async () => {
    const realFetch = globalThis.fetch;
    const seen: string[] = [];
    vi.stubGlobal("fetch", function (this: unknown, url: string, init: RequestInit) {
      // What Chrome and Firefox do when fetch is called detached from window.
      if (this !== globalThis) throw new TypeError("Failed to execute 'fetch': Illegal invocation");
      seen.push(url);
      return realFetch(url, init);
    });
    const cms = createClient({ baseUrl: live.url, apiKey: DEMO_READ_KEY, orgId: DEMO_ORG_ID });
    expect((await cms.categories()).items.length).toBeGreaterThan(0);
    expect(seen).toEqual([`${live.url}/api/organizations/demo/categories`]);
  });

  it("createClient without any fetch fails at once with a message that says what to pass", () => {
    vi.stubGlobal("fetch", undefined);
    expect(() => createClient({ baseUrl: live.url, apiKey: DEMO_READ_KEY, orgId: DEMO_ORG_ID })).toThrow(/options\.fetch/);
  });

  it("an empty apiKey or orgId is refused before any request", () => {
    expect(() => createClient({ baseUrl: live.url, apiKey: "", orgId: DEMO_ORG_ID })).toThrow(TypeError);
    expect(() => createClient({ baseUrl: live.url, apiKey: DEMO_READ_KEY, orgId: "" })).toThrow(TypeError);
  });
});

describe("failures that are not a D6 answer", () => {
  it("no server at the address: network_error with status 0 and the cause", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const cms = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: DEMO_READ_KEY, orgId: DEMO_ORG_ID });
    const error = await rejection(cms.contents());
    expect(error).toBeInstanceOf(CdsnapApiError);
    expect(error).toMatchObject({ status: 0, code: "network_error" });
    expect((error as Error).cause).toBeDefined();
  });

  it("a non-2xx answer without a cdsnap error body (a proxy's HTML page): bad_response with its status", async () => {
    const cms = createClient({
      baseUrl: "https://cdn.example.com",
      apiKey: DEMO_READ_KEY,
      orgId: DEMO_ORG_ID,
      fetch: cannedFetch(502, "<html><body>Bad Gateway</body></html>"),
    });
    expect(await rejection(cms.blocks())).toMatchObject({ name: "CdsnapApiError", status: 502, code: "bad_response" });
  });

  it("a 2xx answer that is not JSON: bad_response with its status", async () => {
    const cms = createClient({
      baseUrl: "https://cdn.example.com",
      apiKey: DEMO_READ_KEY,
      orgId: DEMO_ORG_ID,
      fetch: cannedFetch(200, "<!doctype html><title>Welcome to nginx</title>"),
    });
    expect(await rejection(cms.organization())).toMatchObject({ status: 200, code: "bad_response" });
  });

  it("an aborted call rejects with the abort, not with a CdsnapApiError", async () => {
    const cms = createClient({ baseUrl: live.url, apiKey: DEMO_READ_KEY, orgId: DEMO_ORG_ID });
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(cms.contents({ signal: controller.signal }));
    expect(error).not.toBeInstanceOf(CdsnapApiError);
    expect((error as Error).name).toBe("AbortError");
    // The signal reaches fetch on every method, the updates included.
    const { calls, fetchImpl } = recordingFetch();
    const withSignal = createClient({ baseUrl: live.url, apiKey: DEMO_WRITE_KEY, orgId: DEMO_ORG_ID, fetch: fetchImpl });
    const live2 = new AbortController();
    await withSignal.updateBusinessOffers([], { signal: live2.signal });
    expect(calls[0]!.init.signal).toBe(live2.signal);
  });
});
