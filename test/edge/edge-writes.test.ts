/**
 * The edge sees every write. A PATCH passed through an edge is read back at
 * that edge by the very next GET (read-your-writes), in the Workers runtime
 * (`cdsnap edge dev`: static assets listed when it started, the document in
 * KV) and under Node (`cdsnap edge serve`); a PATCH sent to the origin
 * directly reaches both within seconds, carried by the edge document that
 * `serve` writes again after it. A later write always wins over an earlier
 * one the edge kept.
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { edgeDocumentFileOf } from "../../src/edge/publish-document.js";
import type { RunningServer } from "../../src/server/create-server.js";
import { buildFixture } from "../fixtures/build-fixture.js";
import { runCli } from "../fixtures/cli.js";
import { send } from "../fixtures/edge.js";
import { startEdgeSite, type EdgeSite } from "../fixtures/edge-site.js";
import { api, patchJson } from "../fixtures/http.js";
import { liveGenerationOf } from "../fixtures/tree.js";
import { pollUntil } from "../fixtures/wait.js";

const ORGANIZATION = api("demo", "organization");
const DESCRIPTION = api("demo", "business-description");

const heard: { event: string; document: string }[] = [];
let site: EdgeSite;
let origin: RunningServer;

beforeAll(async () => {
  site = await startEdgeSite({
    serve: {
      writeRate: 100_000,
      // What the document says each time the origin's --on-change hears of a change: what a hook would put into KV.
      onChange: (change) => heard.push({ event: change.event, document: readFileSync(edgeDocumentFileOf(site.fx.out), "utf8") }),
    },
  });
  origin = site.origin;
}, 60_000);

afterAll(() => site?.close());

const EDGES = { workerd: () => site.workerd.url, node: () => site.node.url };

async function organizationAt(base: string): Promise<{ description: string; etag: string | undefined }> {
  const seen = await send(base, ORGANIZATION, { headers: { "x-api-key": DEMO_READ_KEY } });
  expect(seen.status).toBe(200);
  return { description: (JSON.parse(seen.body.toString("utf8")) as { businessDescription: string }).businessDescription, etag: seen.headers["etag"] };
}

async function patchDescription(base: string, text: string): Promise<void> {
  const res = await patchJson(base, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: text });
  expect(res.status, await res.clone().text()).toBe(200);
}

describe.each(Object.keys(EDGES) as (keyof typeof EDGES)[])("%s", (name) => {
  const base = () => EDGES[name]();

  it("a PATCH through the edge is what the next GET at the edge answers, with the origin's ETag", async () => {
    for (let round = 0; round < 3; round++) {
      const text = `Through the ${name} edge, round ${round}.`;
      await patchDescription(base(), text);
      const atEdge = await organizationAt(base());
      expect(atEdge.description).toBe(text);
      expect(atEdge.etag).toBe((await organizationAt(origin.url)).etag);
    }
  });

  it("a PATCH sent to the origin directly reaches the edge within seconds, and wins over a write the edge kept", async () => {
    await patchDescription(base(), `Kept by the ${name} edge.`);
    const text = `Straight to the origin, for ${name}.`;
    const started = performance.now();
    await patchDescription(origin.url, text);
    expect(await pollUntil(async () => (await organizationAt(base())).description === text, 10_000)).toBe(true);
    console.log(`${name}: a PATCH to the origin answered at the edge after ${Math.round(performance.now() - started)} ms`);
    expect((await organizationAt(base())).etag).toBe((await organizationAt(origin.url)).etag);
  });
});

it("when the origin's --on-change hears of a PATCH, the edge document beside the tree already carries the new organization file", async () => {
  const text = "Put into KV by the hook.";
  const before = heard.length;
  await patchDescription(origin.url, text);
  const patches = heard.slice(before).filter((h) => h.event === "patch");
  expect(patches).toHaveLength(1);
  const document = JSON.parse(patches[0]!.document) as { organizations: Record<string, { file: string }> };
  expect((JSON.parse(document.organizations.demo!.file) as { businessDescription: string }).businessDescription).toBe(text);
  // The bytes the origin serves, exactly.
  const served = await send(origin.url, ORGANIZATION, { headers: { "x-api-key": DEMO_READ_KEY } });
  expect(document.organizations.demo!.file).toBe(served.body.toString("utf8"));
});

it("a PATCH after a build and after a key created elsewhere keeps both in the document: serve rewrites only the organization file", async () => {
  type Document = { generation: string; keys: { keyId: string }[]; organizations: Record<string, { file: string }> };
  const readDocument = () => JSON.parse(readFileSync(edgeDocumentFileOf(site.fx.out), "utf8")) as Document;
  await patchDescription(origin.url, "Before the build.");
  await buildFixture(site.fx);
  const created = await runCli(["keys", "create", "--db", site.fx.db, "--org", "demo", "--out", site.fx.out, "--json"]);
  expect(created.code, created.stderr).toBe(0);
  const { id } = JSON.parse(created.stdout) as { id: string };
  const text = "After the build and the new key.";
  await patchDescription(origin.url, text);
  const document = readDocument();
  expect(document.generation).toBe((await liveGenerationOf(site.fx.out)).id);
  expect(document.keys.map((key) => key.keyId)).toContain(id);
  expect((JSON.parse(document.organizations.demo!.file) as { businessDescription: string }).businessDescription).toBe(text);
});
