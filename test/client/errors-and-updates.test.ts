import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import {
  CdsnapApiError,
  createClient,
  type BusinessDescriptionResponse,
  type BusinessOffersResponse,
  type CdsnapClient,
} from "../../src/client/index.js";
import { DEMO_ORG_ID, DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_ORG_ID, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { type StartedSite, startSite } from "../fixtures/served-site.js";

let live: StartedSite;
let reader: CdsnapClient;
let writer: CdsnapClient;
const clientWith = (apiKey: string, orgId = DEMO_ORG_ID) => createClient({ baseUrl: live.url, apiKey, orgId });

beforeAll(async () => {
  live = await startSite();
  reader = clientWith(DEMO_READ_KEY);
  writer = clientWith(DEMO_WRITE_KEY);
});
afterAll(() => live?.stop());

/** The CdsnapApiError a call rejects with (fails the test when it resolves or throws anything else). */
async function failure(call: Promise<unknown>): Promise<CdsnapApiError> {
  const error = await call.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CdsnapApiError);
  return error as CdsnapApiError;
}

describe("a refused call throws CdsnapApiError with the status, code and message of the D6 body", () => {
  it("a wrong key gets 401 unauthorized, and the key is nowhere in the error", async () => {
    const wrongKey = "cdsnap_not_a_key_0000000000000000";
    const error = await failure(clientWith(wrongKey).blocks());
    expect(error).toMatchObject({ name: "CdsnapApiError", status: 401, code: "unauthorized", details: undefined });
    expect(error.message.length).toBeGreaterThan(0);
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain(wrongKey);
  });

  it("a key of another organization gets 403 forbidden, whether the organization exists or not", async () => {
    expect(await failure(clientWith(HARBOR_READ_KEY).organization())).toMatchObject({ status: 403, code: "forbidden" });
    expect(await failure(clientWith(DEMO_READ_KEY, HARBOR_ORG_ID).contents())).toMatchObject({
      status: 403,
      code: "forbidden",
    });
    expect(await failure(clientWith(DEMO_READ_KEY, "no-such-org").categories())).toMatchObject({
      status: 403,
      code: "forbidden",
    });
  });

  it("an unknown id or slug gets 404 not_found from every lookup", async () => {
    // Each call starts when it is awaited: one that fails before its turn would be an unhandled rejection.
    for (const call of [
      () => reader.block("blk-nope"),
      () => reader.blockBySlug("no-such-block"),
      () => reader.block("blk-holiday-promo"), // a draft block is not published
      () => reader.content("post-9999"),
      () => reader.contentBySlug("no-such-post"),
      () => reader.references("post-9999"),
    ]) {
      expect(await failure(call())).toMatchObject({ status: 404, code: "not_found" });
    }
  });

  it("ids and slugs are percent-encoded, so odd input is a clean 404, never another path", async () => {
    // Unencoded, "../organization" would climb out of blocks/ and find the organization.
    expect(await failure(reader.block("../organization"))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(reader.contentBySlug("a b/c?d#e"))).toMatchObject({ status: 404, code: "not_found" });
    // Dot segments would be resolved away by URL parsing: `blocks/.` is the list, `contents/./references` a post.
    for (const call of [() => reader.block("."), () => reader.blockBySlug(".."), () => reader.content(".."), () => reader.references(".")]) {
      expect(await failure(call())).toMatchObject({ status: 404, code: "not_found" });
    }
  });

  it("a read-only key on an update gets 403 insufficient_scope", async () => {
    const before = await reader.organization();
    expect(await failure(reader.updateBusinessDescription("hijacked"))).toMatchObject({
      status: 403,
      code: "insufficient_scope",
    });
    expect(await failure(reader.updateBusinessOffers([]))).toMatchObject({ status: 403, code: "insufficient_scope" });
    expect(await reader.organization()).toEqual(before);
  });

  it("a body breaking D7 gets 422 validation_failed with details naming each member", async () => {
    const error = await failure(
      writer.updateBusinessOffers([
        { name: "Gift card", description: "Any amount", link: "https://northwind.example/gift" },
        { name: "   ", description: "Blank name", link: "javascript:alert(1)" },
      ]),
    );
    expect(error).toMatchObject({ status: 422, code: "validation_failed" });
    expect(error.details?.map((d) => d.path).sort()).toEqual(["businessOffers.1.link", "businessOffers.1.name"]);
    expect(error.details?.every((d) => typeof d.message === "string" && d.message.length > 0)).toBe(true);

    const tooLong = await failure(writer.updateBusinessDescription("x".repeat(10_001)));
    expect(tooLong).toMatchObject({ status: 422, code: "validation_failed" });
    expect(tooLong.details?.map((d) => d.path)).toEqual(["businessDescription"]);
  });
});

describe("updates with a write key", () => {
  it("updateBusinessDescription(text) stores the trimmed text and the organization shows it", async () => {
    const stored = await writer.updateBusinessDescription("  Roasting since 2015.\r\nTwo cafés.  ");
    expectTypeOf(stored).toEqualTypeOf<BusinessDescriptionResponse>();
    expect(stored).toEqual({ businessDescription: "Roasting since 2015.\nTwo cafés." });
    expect((await reader.organization()).businessDescription).toBe("Roasting since 2015.\nTwo cafés.");
  });

  it("updateBusinessOffers(list) replaces the whole list, in order; a null link is no link; [] clears", async () => {
    const stored = await writer.updateBusinessOffers([
      { name: "Espresso course", description: "Two evenings at the bar.", link: "https://northwind.example/course" },
      { name: "Beans by the kilo", description: "For offices.", link: null },
    ]);
    expectTypeOf(stored).toEqualTypeOf<BusinessOffersResponse>();
    expect(stored).toEqual({
      businessOffers: [
        { name: "Espresso course", description: "Two evenings at the bar.", link: "https://northwind.example/course" },
        { name: "Beans by the kilo", description: "For offices." },
      ],
    });
    expect((await reader.organization()).businessOffers).toEqual(stored.businessOffers);
    expect(await writer.updateBusinessOffers([])).toEqual({ businessOffers: [] });
    expect((await reader.organization()).businessOffers).toEqual([]);
  });

  it("ifMatch with the current ETag succeeds; a stale one gets 412 precondition_failed and changes nothing", async () => {
    const { etag: first } = await writer.organizationWithEtag();
    expect(first).not.toBeNull();
    await writer.updateBusinessDescription("first edit", { ifMatch: first! });

    const stale = await failure(writer.updateBusinessDescription("lost update", { ifMatch: first! }));
    expect(stale).toMatchObject({ status: 412, code: "precondition_failed" });
    expect((await reader.organization()).businessDescription).toBe("first edit");

    const { etag: current } = await writer.organizationWithEtag();
    expect(current).not.toBe(first);
    expect(await writer.updateBusinessOffers([], { ifMatch: current! })).toEqual({ businessOffers: [] });
  });
});
