import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { startSite } from "../fixtures/served-site.js";
import { api, call } from "../fixtures/http.js";

describe("Cache-Tag names the entities of each answer, so a CDN can purge by entity", () => {
  let site: Awaited<ReturnType<typeof startSite>>;
  beforeAll(async () => {
    site = await startSite();
  });
  afterAll(async () => site?.stop());

  const tagsOf = async (rest: string) => {
    const res = await call(site.url, api("demo", rest), { key: DEMO_READ_KEY });
    expect(res.status).toBe(200);
    return res.headers.get("cache-tag")?.split(",");
  };

  it("a post by id and by slug carries the post and its category; its references the post", async () => {
    const expected = ["org:demo", "content:demo/post-0011", "category:demo/brewing"];
    expect(await tagsOf("contents/post-0011")).toEqual(expected);
    expect(await tagsOf("contents/by-slug/aeropress-recipes")).toEqual(expected);
    expect(await tagsOf("contents/post-0011/references")).toEqual(["org:demo", "content:demo/post-0011"]);
  });

  it("a block by slug carries the block's id; lists and the organization carry their collection", async () => {
    expect(await tagsOf("blocks/by-slug/home-hero")).toEqual(["org:demo", "block:demo/blk-hero"]);
    expect(await tagsOf("contents")).toEqual(["org:demo", "contents:demo"]);
    expect(await tagsOf("blocks?pages=home")).toEqual(["org:demo", "blocks:demo"]);
    expect(await tagsOf("organization")).toEqual(["org:demo", "organization:demo"]);
  });
});
