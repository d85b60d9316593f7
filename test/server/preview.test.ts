/**
 * A key with the `preview` scope reads the preview tree through the same
 * URLs (`build --preview`); every other key reads the public tree, as before.
 * The canary posts (fixtures/preview-canaries.ts) are the proof.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { createKey, hashKey } from "../../src/db/keys.js";
import { startServer, type RunningServer } from "../../src/server/create-server.js";
import { buildFixture, makeFixture, removeFixture, type Fixture } from "../fixtures/build-fixture.js";
import { runCli } from "../fixtures/cli.js";
import { withDb } from "../fixtures/database.js";
import { patchJson } from "../fixtures/http.js";
import { createPreviewKey, expectPreviewSees, expectReadKeyBlind, writeCanaryPosts } from "../fixtures/preview-canaries.js";

let fx: Fixture;
let server: RunningServer;
let previewKey: string;

beforeAll(async () => {
  fx = await makeFixture({ demo: true });
  writeCanaryPosts(fx.content);
  await buildFixture(fx, { preview: true });
  previewKey = withDb(fx.db, createPreviewKey);
  server = await startServer({ db: fx.db, out: fx.out, port: 0, log: () => undefined });
});
afterAll(async () => {
  await server?.close(1_000);
  await removeFixture(fx);
});

const get = (apiPath: string, key: string) => fetch(`${server.url}/api/organizations/demo/${apiPath}`, { headers: { "x-api-key": key } });

describe("serve and the preview scope", () => {
  it("a preview key reads the draft and the scheduled post, with their status, in private answers", async () => {
    await expectPreviewSees(server.url, previewKey);
  });

  it("a read key, and a write key, get 404 on their paths and never meet a canary", async () => {
    await expectReadKeyBlind(server.url, DEMO_READ_KEY);
    await expectReadKeyBlind(server.url, DEMO_WRITE_KEY);
  });

  it("a PATCH is read back at once by a preview key: the organization file is the public tree's", async () => {
    const key = withDb(fx.db, (db) => createKey(db, { orgId: "demo", scopes: ["read", "write", "preview"] }).rawKey);
    const res = await patchJson(server.url, "/api/organizations/demo/business-description", key, { businessDescription: "Read back by a preview key." });
    expect(res.status).toBe(200);
    const organization = (await (await get("organization", previewKey)).json()) as { businessDescription: string };
    expect(organization.businessDescription).toBe("Read back by a preview key.");
  });

  it("the same path answers a preview key and a read key apart: the ETag of one never revalidates the other's", async () => {
    const preview = await get("contents", previewKey);
    const read = await get("contents", DEMO_READ_KEY);
    expect(preview.headers.get("etag")).not.toBe(read.headers.get("etag"));
    const revalidated = await fetch(`${server.url}/api/organizations/demo/contents`, {
      headers: { "x-api-key": DEMO_READ_KEY, "if-none-match": preview.headers.get("etag")! },
    });
    expect(revalidated.status).toBe(200);
    expect(revalidated.headers.get("cache-control")).toBe("public, max-age=60, stale-while-revalidate=600");
  });
});

describe("keys with the preview scope", () => {
  it("keys create --scopes read,preview stores `read preview`, and the key reads the preview at once", async () => {
    for (const [flag, stored] of [["read,preview", "read preview"], ["read,write,preview", "read write preview"], ["preview", "read preview"]]) {
      const created = await runCli(["keys", "create", "--db", fx.db, "--org", "demo", "--scopes", flag!, "--json"]);
      expect(created.code, created.stderr).toBe(0);
      const record = JSON.parse(created.stdout) as { id: string; key: string; scopes: string };
      expect(record.scopes).toBe(stored);
      expect(withDb(fx.db, (db) => db.prepare("SELECT scopes FROM api_keys WHERE id = ?").pluck().get(record.id))).toBe(stored);
      const items = ((await (await get("contents", record.key)).json()) as { items: { id: string }[] }).items;
      expect(items.map((i) => i.id)).toContain("canary-draft");
    }
    const listed = await runCli(["keys", "list", "--db", fx.db, "--org", "demo"]);
    expect(listed.stdout).toMatch(/\tread write preview\t/);
  });

  it("an unknown scope is refused with the scopes there are", async () => {
    const refused = await runCli(["keys", "create", "--db", fx.db, "--org", "demo", "--scopes", "read,drafts"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('unknown scope "drafts"; use read, read,write, read,preview or read,write,preview');
  });

  it("a scopes column an admin tool wrote with preview among its words grants it; with a comma, nothing but read", async () => {
    const insert = (id: string, scopes: string, key: string) =>
      withDb(fx.db, (db) =>
        db
          .prepare("INSERT INTO api_keys (id, org_id, key_sha256, scopes, label, created_at) VALUES (?, 'demo', ?, ?, 'admin', ?)")
          .run(id, hashKey(key), scopes, new Date().toISOString()),
      );
    insert("key_admin_preview", "preview read", "cds_admin_tool_preview_key_0001");
    insert("key_admin_comma", "read,preview", "cds_admin_tool_comma_key_00002");
    const statusOf = async (key: string) => (await get("contents/canary-draft", key)).status;
    expect(await statusOf("cds_admin_tool_preview_key_0001")).toBe(200);
    expect(await statusOf("cds_admin_tool_comma_key_00002")).toBe(404);
  });
});

describe("a preview key without a preview tree", () => {
  it("reads the public tree, privately: no draft, no scheduled post", async () => {
    const plain = await makeFixture({ demo: true });
    try {
      writeCanaryPosts(plain.content);
      await buildFixture(plain);
      const key = withDb(plain.db, createPreviewKey);
      const alone = await startServer({ db: plain.db, out: plain.out, port: 0, log: () => undefined });
      try {
        const res = await fetch(`${alone.url}/api/organizations/demo/contents`, { headers: { "x-api-key": key } });
        expect(res.status).toBe(200);
        expect(res.headers.get("cache-control")).toBe("private, no-store");
        const items = ((await res.json()) as { items: { id: string; status?: string }[] }).items;
        expect(items.map((i) => i.id)).not.toContain("canary-draft");
        expect(items.every((i) => i.status === undefined)).toBe(true);
        await expectReadKeyBlind(alone.url, key, { privately: true });
      } finally {
        await alone.close(1_000);
      }
    } finally {
      await removeFixture(plain);
    }
  });
});
