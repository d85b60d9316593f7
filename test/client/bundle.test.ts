/**
 * The published artifact, not the sources: dist/client.js as scripts/bundle.mjs
 * builds it, imported the way a frontend's bundler would, against a live server.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as ClientModule from "../../src/client/index.js";
import { DEMO_ORG_ID, DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { REPO_ROOT } from "../fixtures/repo.js";
import { type StartedSite, startSite } from "../fixtures/served-site.js";

const BUNDLE = path.join(REPO_ROOT, "dist", "client.js");

let live: StartedSite;
let bundled: typeof ClientModule;
let source: string;

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ["scripts/bundle.mjs"], { cwd: REPO_ROOT });
  source = await readFile(BUNDLE, "utf8");
  bundled = (await import(/* @vite-ignore */ pathToFileURL(BUNDLE).href)) as typeof ClientModule;
  live = await startSite();
}, 60_000);
afterAll(() => live?.stop());

describe("dist/client.js", () => {
  it("is self-contained: no import at all, so no node: module and no zod", () => {
    expect(source).not.toMatch(/\bfrom\s*["']|\bimport\s*\(|\brequire\s*\(/);
    expect(source).not.toMatch(/["']node:/);
    expect(source).not.toMatch(/zod/i);
  });

  it("exports exactly createClient, CdsnapApiError and isNotModified at run time (the rest are types)", () => {
    expect(Object.keys(bundled).sort()).toEqual(["CdsnapApiError", "createClient", "isNotModified"]);
  });

  it("talks to a live server: typed reads, and a typed error on a wrong key", async () => {
    const cms = bundled.createClient({ baseUrl: live.url, apiKey: DEMO_READ_KEY, orgId: DEMO_ORG_ID });
    const { items } = await cms.blocks({ pages: ["pricing"] });
    expect(items.map((b) => b.id)).toEqual(["blk-pricing-faq", "blk-pricing-table"]);
    const post = await cms.contentBySlug("sourcing-ethiopian-yirgacheffe");
    expect(post.id).toBe("post-0002");

    const error = await bundled
      .createClient({ baseUrl: live.url, apiKey: "wrong", orgId: DEMO_ORG_ID })
      .organization()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(bundled.CdsnapApiError);
    expect(error).toMatchObject({ name: "CdsnapApiError", status: 401, code: "unauthorized" });
  });
});
