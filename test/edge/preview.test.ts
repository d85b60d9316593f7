/**
 * The edge never holds preview content: not in the tree it serves, not in its
 * document. A key with the preview scope is passed to the origin (`serve`),
 * as a PATCH is, in the Workers runtime (`edge dev`) and under Node (`edge
 * serve`); without an origin it reads the public tree, privately.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { hashKey } from "../../src/db/keys.js";
import { keyDigest, type EdgeDocument } from "../../src/edge/edge-document.js";
import { startEdgeServer } from "../../src/edge/node-adapter.js";
import { edgeDocumentFileOf } from "../../src/edge/publish-document.js";
import { withDb } from "../fixtures/database.js";
import { startEdgeSite, type EdgeSite } from "../fixtures/edge-site.js";
import { CANARIES, createPreviewKey, expectPreviewSees, expectReadKeyBlind, writeCanaryPosts } from "../fixtures/preview-canaries.js";

let site: EdgeSite;
let previewKey: string;

beforeAll(async () => {
  site = await startEdgeSite({
    prepare: (fx) => {
      writeCanaryPosts(fx.content);
      previewKey = withDb(fx.db, createPreviewKey);
    },
    build: { preview: true },
  });
});
afterAll(() => site?.close());

describe("the edge and the preview scope", () => {
  it("the edge document names the preview key's scope and holds no canary", async () => {
    const text = await readFile(edgeDocumentFileOf(site.fx.out), "utf8");
    for (const canary of CANARIES) expect(text).not.toContain(canary);
    const doc = JSON.parse(text) as EdgeDocument;
    const digest = await keyDigest(doc.salt, hashKey(previewKey));
    expect(doc.keys.find((key) => key.digest === digest)?.scopes).toEqual(["read", "preview"]);
  });

  for (const target of ["workerd", "node"] as const) {
    it(`${target}: a preview key is passed to the origin and sees the draft and the scheduled post, privately`, async () => {
      await expectPreviewSees(site[target].url, previewKey);
    });

    it(`${target}: a read key gets 404 on their paths and never meets a canary`, async () => {
      await expectReadKeyBlind(site[target].url, DEMO_READ_KEY);
    });
  }

  it("without an origin, a preview key reads the public tree, answered privately", async () => {
    const alone = await startEdgeServer({ out: site.fx.out, port: 0, refreshMs: 50 });
    try {
      await expectReadKeyBlind(alone.url, previewKey, { privately: true });
    } finally {
      await alone.close();
    }
  });
});
