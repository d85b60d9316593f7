/**
 * D5: every request but a preflight carries x-api-key; keys belong to one
 * organization, carry scopes, are stored only as their SHA-256, and a revoked
 * key stops working without a restart.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../../src/db/keys.js";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { withDb } from "../fixtures/database.js";
import { sha256Hex } from "../fixtures/tree.js";
import { runCli } from "../fixtures/cli.js";
import { type Served, serveSite, startSite } from "../fixtures/served-site.js";
import { api, call, expectError, patchJson, rawRequest } from "../fixtures/http.js";
import { pollUntil } from "../fixtures/wait.js";

let site: Served & { stop(): Promise<void> };
let revokedKey: string;

beforeAll(async () => {
  site = await startSite();
  revokedKey = withDb(site.db, (db) => {
    const created = createKey(db, { orgId: "demo", scopes: ["read", "write"], label: "to revoke" });
    revokeKey(db, created.record.id);
    return created.rawKey;
  });
});
afterAll(() => site?.stop());

const ORG = api("demo", "organization");

describe("D5 authentication", () => {
  it("a request without x-api-key gets 401 unauthorized", async () => {
    await expectError(await call(site.url, ORG), 401, "unauthorized");
  });

  it("an empty x-api-key gets 401 unauthorized", async () => {
    const res = await rawRequest(site.url, { path: ORG, headers: { "x-api-key": "" } });
    await expectError(res, 401, "unauthorized");
  });

  it("an unknown key gets 401 unauthorized", async () => {
    await expectError(await call(site.url, ORG, { key: "cds_not_a_key_anyone_made" }), 401, "unauthorized");
    // A near miss of a real key is just as unknown.
    await expectError(await call(site.url, ORG, { key: `${DEMO_READ_KEY}x` }), 401, "unauthorized");
  });

  it("two x-api-key headers are refused with 401 unauthorized, even when both hold the same valid key", async () => {
    const res = await rawRequest(site.url, { path: ORG, headers: { "x-api-key": [DEMO_READ_KEY, DEMO_READ_KEY] } });
    await expectError(res, 401, "unauthorized");
  });

  it("a revoked key gets 401 unauthorized", async () => {
    await expectError(await call(site.url, ORG, { key: revokedKey }), 401, "unauthorized");
  });

  it("a key is refused on a PATCH path before anything else is looked at", async () => {
    const res = await patchJson(site.url, api("demo", "business-description"), revokedKey, { businessDescription: "x" });
    await expectError(res, 401, "unauthorized");
  });

  it("another organization's key gets the same 403 forbidden on an existing and on a missing organization", async () => {
    const existing = await call(site.url, ORG, { key: HARBOR_READ_KEY });
    const missing = await call(site.url, api("no-such-org", "organization"), { key: HARBOR_READ_KEY });
    const existingBody = await expectError(existing.clone(), 403, "forbidden");
    await expectError(missing.clone(), 403, "forbidden");
    expect(await missing.text()).toBe(await existing.text());
    expect(existingBody.error.code).toBe("forbidden");
    // The same from the other side, and on a list path.
    const reverse = await call(site.url, api("harbor", "blocks"), { key: DEMO_READ_KEY });
    await expectError(reverse, 403, "forbidden");
  });

  it("another organization's key cannot PATCH, whether or not the organization exists", async () => {
    for (const orgId of ["demo", "no-such-org"]) {
      const res = await patchJson(site.url, api(orgId, "business-description"), HARBOR_READ_KEY, {
        businessDescription: "x",
      });
      await expectError(res, 403, "forbidden");
    }
  });

  it("a read-only key gets 403 insufficient_scope on each PATCH", async () => {
    const description = await patchJson(site.url, api("demo", "business-description"), DEMO_READ_KEY, {
      businessDescription: "read keys cannot write",
    });
    await expectError(description, 403, "insufficient_scope");
    const offers = await patchJson(site.url, api("demo", "business-offers"), DEMO_READ_KEY, { businessOffers: [] });
    await expectError(offers, 403, "insufficient_scope");
  });

  it("a write key can read", async () => {
    const res = await call(site.url, ORG, { key: DEMO_WRITE_KEY });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }).id).toBe("demo");
    expect((await call(site.url, api("demo", "blocks"), { key: DEMO_WRITE_KEY })).status).toBe(200);
  });

  it("the database stores keys only as lowercase hex SHA-256", async () => {
    const rows = withDb(site.db, (db) => db.prepare("SELECT id, key_sha256 FROM api_keys").all()) as {
      id: string;
      key_sha256: string;
    }[];
    for (const row of rows) expect(row.key_sha256).toMatch(/^[0-9a-f]{64}$/);
    const byId = new Map(rows.map((r) => [r.id, r.key_sha256]));
    expect(byId.get("demo-read")).toBe(sha256Hex(DEMO_READ_KEY));
    expect(byId.get("demo-write")).toBe(sha256Hex(DEMO_WRITE_KEY));
    const bytes = Buffer.concat([await readFile(site.db), await readFile(`${site.db}-wal`).catch(() => Buffer.alloc(0))]);
    for (const raw of [DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY, revokedKey]) {
      expect(bytes.includes(raw)).toBe(false);
    }
  });
});

describe("cdsnap keys", () => {
  it("create prints a raw key once that works, list never shows it, revoke stops it without a restart", async () => {
    const created = await runCli(["keys", "create", "--db", site.db, "--org", "demo", "--scopes", "read,write", "--label", "ci"]);
    expect(created.code, created.stderr).toBe(0);
    // stdout is the key alone, so `KEY=$(cdsnap keys create …)` captures exactly it.
    expect(created.stdout).toMatch(/^\S{20,}\n$/);
    const key = created.stdout.trim();
    expect(created.stderr).not.toContain(key);
    const keyId = /created key (\S+) for demo \(read write\); store it now/.exec(created.stderr)?.[1];
    expect(keyId).toBeDefined();

    const stored = withDb(site.db, (db) => db.prepare("SELECT key_sha256, scopes FROM api_keys WHERE id = ?").get(keyId)) as {
      key_sha256: string;
      scopes: string;
    };
    expect(stored).toEqual({ key_sha256: sha256Hex(key), scopes: "read write" });

    // The running server picks the new key up without a restart.
    const works = await pollUntil(async () => (await call(site.url, ORG, { key })).status === 200, 30_000);
    expect(works).toBe(true);
    const written = await patchJson(site.url, api("demo", "business-description"), key, { businessDescription: "from a CLI key" });
    expect(written.status).toBe(200);

    for (const args of [[], ["--json"], ["--org", "demo"]]) {
      const listed = await runCli(["keys", "list", "--db", site.db, ...args]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(keyId!);
      expect(listed.stdout).not.toContain(key);
      expect(listed.stdout).not.toContain(sha256Hex(key));
      expect(listed.stdout).not.toContain(sha256Hex(DEMO_READ_KEY));
    }

    const revoked = await runCli(["keys", "revoke", keyId!, "--db", site.db]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).not.toContain(key);
    let last: Response | undefined;
    const refused = await pollUntil(async () => {
      last = await call(site.url, ORG, { key });
      return last.status === 401;
    }, 30_000);
    expect(refused).toBe(true);
    await expectError(last!, 401, "unauthorized");
    // Revoking one key leaves the others working.
    expect((await call(site.url, ORG, { key: DEMO_READ_KEY })).status).toBe(200);
  });

  it("a key created while the server runs works on its very first request, whenever the database watch looks next", async () => {
    // A watch that never comes round in this test: only the look made before refusing a key can let it in.
    const watchless = await serveSite(site, { authRefreshMs: 3_600_000 });
    try {
      expect((await call(watchless.url, ORG, { key: DEMO_READ_KEY })).status).toBe(200);
      const created = await runCli(["keys", "create", "--db", site.db, "--org", "demo"]);
      expect(created.code, created.stderr).toBe(0);
      expect((await call(watchless.url, ORG, { key: created.stdout.trim() })).status).toBe(200);
      await expectError(await call(watchless.url, ORG, { key: "cdsnap_still_unknown" }), 401, "unauthorized");
    } finally {
      await watchless.close();
    }
  });

  it("create and list print scopes as the database stores them, `read` or `read write`, in lines and in JSON", async () => {
    const created = await runCli(["keys", "create", "--db", site.db, "--org", "harbor", "--scopes", "read,write", "--label", "scopes", "--json"]);
    expect(created.code, created.stderr).toBe(0);
    const record = JSON.parse(created.stdout) as { id: string; scopes: unknown };
    expect(record.scopes).toBe("read write");
    // Written by an admin tool with a comma: a read key (docs/data-contract.md), and listed as one.
    withDb(site.db, (db) =>
      db
        .prepare("INSERT INTO api_keys (id, org_id, key_sha256, scopes, label, created_at) VALUES (?, 'harbor', ?, 'read,write', 'comma', ?)")
        .run("key_comma", "c".repeat(64), new Date().toISOString()),
    );

    const lines = await runCli(["keys", "list", "--db", site.db, "--org", "harbor"]);
    expect(lines.code, lines.stderr).toBe(0);
    const scopesById = new Map(lines.stdout.trim().split("\n").map((line) => [line.split("\t")[0], line.split("\t")[2]]));
    expect(scopesById.get(record.id)).toBe("read write");
    expect(scopesById.get("key_comma")).toBe("read");
    expect(scopesById.get("harbor-read")).toBe("read");

    const json = await runCli(["keys", "list", "--db", site.db, "--org", "harbor", "--json"]);
    const listed = new Map((JSON.parse(json.stdout) as { id: string; scopes: unknown }[]).map((k) => [k.id, k.scopes]));
    expect(listed.get(record.id)).toBe("read write");
    expect(listed.get("key_comma")).toBe("read");
    expect(withDb(site.db, (db) => db.prepare("SELECT scopes FROM api_keys WHERE id = ?").pluck().get(record.id))).toBe("read write");
  });

  it("the raw key of a created key is never written to the database or the log", async () => {
    const created = await runCli(["keys", "create", "--db", site.db, "--org", "demo"]);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.split("\n")[0]!;
    await pollUntil(async () => (await call(site.url, ORG, { key })).status === 200, 30_000);
    const bytes = Buffer.concat([await readFile(site.db), await readFile(`${site.db}-wal`).catch(() => Buffer.alloc(0))]);
    expect(bytes.includes(key)).toBe(false);
    expect(JSON.stringify(site.logs)).not.toContain(key);
  });
});
