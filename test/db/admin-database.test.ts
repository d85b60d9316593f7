/**
 * A database the organization's admin tools made, as a new user has it: created
 * by the `sqlite3` command from the data contract's CREATE TABLE statements
 * (written out here, not taken from cdsnap), with columns in another order,
 * admin columns and tables of its own, no cdsnap bookkeeping and
 * `PRAGMA user_version = 7`. Every command works on it, the reading ones leave
 * it byte for byte as it was, and `db migrate` adopts it without touching a row.
 *
 * Without the `sqlite3` command the suite is skipped on a developer machine
 * (saying so) and fails in CI, where `.ci/run` installs it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../fixtures/build-fixture.js";
import { runCli, spawnCli } from "../fixtures/cli.js";

const HAVE_SQLITE3 = spawnSync("sqlite3", ["-version"]).status === 0;
const REQUIRED = Boolean(process.env.CI || process.env.CDSNAP_E2E_REQUIRED);
if (!HAVE_SQLITE3 && !REQUIRED) {
  console.warn("admin-database tests skipped: the sqlite3 command is missing (apt-get install sqlite3); CI runs them");
}

const READ_KEY = "admin-made-read-key-0001";
const WRITE_KEY = "admin-made-write-key-0001";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The contract's tables as an admin tool might declare them: other column order, extra columns. */
function adminSchema(options: { omitColumn?: string; omitTable?: string } = {}): string {
  const tables: Record<string, string> = {
    organizations: `CREATE TABLE organizations(
      created_by TEXT NOT NULL DEFAULT 'admin',
      allowed_origins TEXT,
      business_description TEXT NOT NULL DEFAULT '',
      gtm_container_id TEXT,
      meta_pixel_id TEXT,
      google_analytics_id TEXT,
      slug TEXT NOT NULL UNIQUE,
      name TEXT NOT NULL,
      id TEXT PRIMARY KEY,
      billing_plan TEXT
    );`,
    organization_secrets: `CREATE TABLE organization_secrets(
      value TEXT NOT NULL,
      name TEXT NOT NULL,
      org_id TEXT NOT NULL REFERENCES organizations(id),
      rotated_at TEXT,
      PRIMARY KEY (org_id, name)
    );`,
    business_offers: `CREATE TABLE business_offers(
      org_id TEXT NOT NULL REFERENCES organizations(id),
      position INTEGER NOT NULL,
      name TEXT NOT NULL,
      description TEXT NOT NULL,
      link TEXT,
      PRIMARY KEY (org_id, position)
    );`,
    api_keys: `CREATE TABLE api_keys(
      id TEXT PRIMARY KEY,
      org_id TEXT NOT NULL REFERENCES organizations(id),
      key_sha256 TEXT NOT NULL UNIQUE,
      scopes TEXT NOT NULL,
      label TEXT,
      created_at TEXT NOT NULL,
      revoked_at TEXT,
      created_by_user INTEGER
    );`,
    categories: `CREATE TABLE categories(
      position INTEGER NOT NULL DEFAULT 0,
      value TEXT NOT NULL,
      slug TEXT NOT NULL,
      id TEXT NOT NULL,
      org_id TEXT NOT NULL REFERENCES organizations(id),
      color TEXT,
      PRIMARY KEY (org_id, id), UNIQUE (org_id, slug)
    );`,
    blocks: `CREATE TABLE blocks(
      org_id TEXT NOT NULL REFERENCES organizations(id),
      id TEXT NOT NULL,
      slug TEXT NOT NULL,
      name TEXT NOT NULL,
      status TEXT NOT NULL,
      position INTEGER NOT NULL DEFAULT 0,
      updated_at TEXT,
      PRIMARY KEY (org_id, id), UNIQUE (org_id, slug)
    );`,
    block_fields: `CREATE TABLE block_fields(
      org_id TEXT NOT NULL,
      block_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      key TEXT NOT NULL,
      type TEXT NOT NULL,
      value TEXT NOT NULL,
      PRIMARY KEY (org_id, block_id, position),
      FOREIGN KEY (org_id, block_id) REFERENCES blocks(org_id, id)
    );`,
    block_pages: `CREATE TABLE block_pages(
      org_id TEXT NOT NULL,
      block_id TEXT NOT NULL,
      page TEXT NOT NULL,
      PRIMARY KEY (org_id, block_id, page),
      FOREIGN KEY (org_id, block_id) REFERENCES blocks(org_id, id)
    );`,
  };
  let sql = "";
  for (const [name, statement] of Object.entries(tables)) {
    if (name === options.omitTable) continue;
    sql += `${options.omitColumn ? statement.replace(new RegExp(`^\\s*${options.omitColumn} [^\\n]*\\n`, "m"), "") : statement}\n`;
  }
  return `${sql}
CREATE TABLE admin_users(id INTEGER PRIMARY KEY, email TEXT NOT NULL);
CREATE TABLE audit_log(at TEXT NOT NULL, what TEXT NOT NULL);
CREATE INDEX audit_log_at ON audit_log(at);
PRAGMA user_version = 7;
INSERT INTO admin_users(email) VALUES ('owner@acme.example');
INSERT INTO organizations(id, name, slug, google_analytics_id, billing_plan)
  VALUES ('acme', 'Acme Roasters', 'acme-roasters', 'G-ACME1', 'pro');
INSERT INTO organization_secrets(org_id, name, value) VALUES ('acme', 'smtp_password', 'hunter2-never-published');
INSERT INTO business_offers(org_id, position, name, description, link)
  VALUES ('acme', 0, 'Cupping', 'A tasting of three coffees.', NULL);
INSERT INTO api_keys(id, org_id, key_sha256, scopes, label, created_at)
  VALUES ('k-read', 'acme', '${sha256(READ_KEY)}', 'read', 'website', '2026-01-01T00:00:00Z'),
         ('k-write', 'acme', '${sha256(WRITE_KEY)}', 'read write', 'admin panel', '2026-01-01T00:00:00Z');
INSERT INTO categories(org_id, id, slug, value, position, color) VALUES ('acme', 'c1', 'news', 'News', 0, 'red');
INSERT INTO blocks(org_id, id, slug, name, status, position) VALUES
  ('acme', 'hero', 'hero', 'Hero', 'published', 0),
  ('acme', 'promo', 'promo', 'Promo', 'draft', 1);
INSERT INTO block_fields(org_id, block_id, position, key, type, value) VALUES
  ('acme', 'hero', 0, 'headline', 'text', '"Fresh every morning"'),
  ('acme', 'promo', 0, 'headline', 'text', '"Not yet"');
INSERT INTO block_pages(org_id, block_id, page) VALUES ('acme', 'hero', 'home');
INSERT INTO audit_log(at, what) VALUES ('2026-01-01', 'created acme');
`;
}

/** Builds the site, which must succeed without a word on stderr, and reads the organization's answer. */
async function buildCleanly(site: { db: string; content: string; out: string }): Promise<{ name: string; businessDescription: string }> {
  const built = await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out]);
  expect(built.stderr).toBe("");
  expect(built.code).toBe(0);
  return JSON.parse(await readFile(path.join(site.out, "api/organizations/acme/organization.json"), "utf8"));
}

/** The admin schema with contract table `table` made a view over the admin tools' own `ownTable`. */
function withContractView(table: string, ownTable: string, columns: string): string {
  return adminSchema()
    .replace(`CREATE TABLE ${table}(`, `CREATE TABLE ${ownTable}(`)
    .replace("CREATE TABLE admin_users(", `CREATE VIEW ${table} AS SELECT ${columns} FROM ${ownTable};\nCREATE TABLE admin_users(`)
    .replace(`INSERT INTO ${table}(`, `INSERT INTO ${ownTable}(`);
}

const PUBLISHED_POST = `---
id: first-post
title: "Our first roast"
slug: our-first-roast
status: published
publishedAt: 2026-01-10
authorName: Grace Hopper
category: news
tags: [roasting]
---
We roasted **our first batch** today.
`;

const DRAFT_POST = `---
id: second-post
title: Not ready
slug: not-ready
status: draft
publishedAt: 2026-02-01
authorName: Grace Hopper
---
Draft body.
`;

function sqlite(db: string, sql: string): string {
  return execFileSync("sqlite3", ["-bail", db], { input: sql, encoding: "utf8" });
}

interface AdminSite {
  dir: string;
  db: string;
  content: string;
  out: string;
}

async function makeAdminSite(dir: string, schema = adminSchema()): Promise<AdminSite> {
  const site = { dir, db: path.join(dir, "admin.db"), content: path.join(dir, "content"), out: path.join(dir, "site") };
  sqlite(site.db, schema);
  await mkdir(path.join(site.content, "acme", "2026"), { recursive: true });
  await writeFile(path.join(site.content, "acme", "2026", "first.md"), PUBLISHED_POST);
  await writeFile(path.join(site.content, "acme", "drafts.md"), DRAFT_POST);
  return site;
}

const fileHash = async (file: string) => sha256((await readFile(file)).toString("latin1"));
/** Every row of every table and every schema object, as the sqlite3 command dumps them. */
const dump = (db: string) => sqlite(db, ".dump");

async function serve(site: AdminSite): Promise<{ url: string; stop(): Promise<number | null> }> {
  const child = await spawnCli(["serve", "--db", site.db, "--content", site.content, "--out", site.out, "--port", "0"]);
  const url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      seen += chunk;
      const match = /cdsnap serving (http:\/\/\S+)/.exec(seen);
      if (match) resolve(match[1]!);
    });
    let errors = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (errors += chunk));
    child.once("close", (code) => reject(new Error(`serve exited ${code}: ${errors}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once("close", (code) => resolve(code));
        child.kill("SIGTERM");
      }),
  };
}

describe.skipIf(!HAVE_SQLITE3 && !REQUIRED)("a database made by the admin tools with the sqlite3 command", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir("cdsnap-admin-db-");
  });
  afterEach(async () => {
    await removeDir(dir);
  });

  it("check, build and audit read it as it is and leave every byte of it unchanged", async () => {
    const site = await makeAdminSite(dir);
    const before = await fileHash(site.db);

    const check = await runCli(["check", "--db", site.db, "--content", site.content]);
    expect(check.stderr).not.toMatch(/schema version|migrate/);
    expect(check.code).toBe(0);

    const built = await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out, "--json"]);
    expect(built.stderr).toBe("");
    expect(built.code).toBe(0);
    const org = JSON.parse(await readFile(path.join(site.out, "api/organizations/acme/organization.json"), "utf8"));
    expect(org).toEqual({
      id: "acme",
      name: "Acme Roasters",
      slug: "acme-roasters",
      integrations: { googleAnalyticsId: "G-ACME1", metaPixelId: null, gtmContainerId: null },
      businessDescription: "",
      businessOffers: [{ name: "Cupping", description: "A tasting of three coffees." }],
    });
    const contents = JSON.parse(await readFile(path.join(site.out, "api/organizations/acme/contents.json"), "utf8"));
    expect(contents.items.map((item: { id: string }) => item.id)).toEqual(["first-post"]);
    expect(contents.items[0].categoryName).toBe("News");
    const blocks = JSON.parse(await readFile(path.join(site.out, "api/organizations/acme/blocks.json"), "utf8"));
    expect(blocks.items.map((block: { id: string }) => block.id)).toEqual(["hero"]);

    const audit = await runCli(["audit", "--db", site.db, "--out", site.out, "--content", site.content]);
    expect(audit.code).toBe(0);

    expect(await fileHash(site.db)).toBe(before);
    expect(sqlite(site.db, "PRAGMA user_version;").trim()).toBe("7");
    expect(sqlite(site.db, "PRAGMA journal_mode;").trim()).toBe("delete");
  });

  it("a build after the admin's tools change a row rebuilds that organization; with nothing changed, it keeps the tree", async () => {
    const site = await makeAdminSite(dir);
    const build = async () => {
      const run = await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out, "--json"]);
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as { changed: boolean; postsParsed: number; changedPaths: { changed: string[] } };
    };
    await build();
    expect(await build()).toMatchObject({ changed: false, postsParsed: 0 });

    sqlite(site.db, "UPDATE categories SET value = 'Newsroom', color = 'blue' WHERE org_id = 'acme' AND id = 'c1';");
    const renamed = await build();
    expect(renamed.changed).toBe(true);
    expect(renamed.changedPaths.changed).toContain("/api/organizations/acme/categories");
    const contents = JSON.parse(await readFile(path.join(site.out, "api/organizations/acme/contents.json"), "utf8"));
    expect(contents.items[0].categoryName).toBe("Newsroom");

    // A column of the admin's own, no part of any answer, is not read: nothing to rebuild.
    sqlite(site.db, "UPDATE categories SET color = 'green' WHERE org_id = 'acme' AND id = 'c1';");
    expect(await build()).toMatchObject({ changed: false, postsParsed: 0 });
  });

  it("serve answers the admin's keys, stores a PATCH, and leaves the admin's columns and user_version alone", async () => {
    const site = await makeAdminSite(dir);
    expect((await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out])).code).toBe(0);
    const server = await serve(site);
    try {
      const base = `${server.url}/api/organizations/acme`;
      const read = await fetch(`${base}/blocks?pages=home`, { headers: { "x-api-key": READ_KEY } });
      expect(read.status).toBe(200);
      expect(((await read.json()) as { items: { id: string }[] }).items.map((b) => b.id)).toEqual(["hero"]);

      const patch = await fetch(`${base}/business-description`, {
        method: "PATCH",
        headers: { "x-api-key": WRITE_KEY, "content-type": "application/json" },
        body: JSON.stringify({ businessDescription: "Roasted by the harbour." }),
      });
      expect(patch.status).toBe(200);
      const org = await fetch(`${base}/organization`, { headers: { "x-api-key": READ_KEY } });
      expect(((await org.json()) as { businessDescription: string }).businessDescription).toBe("Roasted by the harbour.");
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(sqlite(site.db, "SELECT business_description, billing_plan, created_by FROM organizations;").trim()).toBe(
      "Roasted by the harbour.|pro|admin",
    );
    expect(sqlite(site.db, "PRAGMA user_version;").trim()).toBe("7");
    expect(sqlite(site.db, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'cdsnap%';").trim()).toBe("0");
  });

  it("keys list shows the admin's keys and keys create adds one that works with the build's tree", async () => {
    const site = await makeAdminSite(dir);
    const list = await runCli(["keys", "list", "--db", site.db, "--json"]);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((k) => k.id).sort()).toEqual(["k-read", "k-write"]);
    const created = await runCli(["keys", "create", "--db", site.db, "--org", "acme", "--json"]);
    expect(created.code).toBe(0);
    const { key } = JSON.parse(created.stdout) as { key: string };
    expect(sqlite(site.db, `SELECT count(*) FROM api_keys WHERE key_sha256 = '${sha256(key)}';`).trim()).toBe("1");
    expect(sqlite(site.db, "PRAGMA user_version;").trim()).toBe("7");
  });

  it("db migrate adopts it: adds cdsnap's index and bookkeeping, changes no admin row, and a second run changes nothing", async () => {
    const site = await makeAdminSite(dir);
    const tables = ["organizations", "organization_secrets", "business_offers", "api_keys", "categories", "blocks", "block_fields", "block_pages", "admin_users", "audit_log"];
    const rows = () => tables.map((t) => sqlite(site.db, `SELECT * FROM ${t} ORDER BY 1, 2;`)).join("\n--\n");
    const rowsBefore = rows();

    const first = await runCli(["db", "migrate", "--db", site.db]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/added api_keys_org/);
    expect(rows()).toBe(rowsBefore);
    expect(sqlite(site.db, "PRAGMA user_version;").trim()).toBe("7");
    expect(sqlite(site.db, "SELECT name FROM cdsnap_schema;").trim()).toBe("api_keys_org");
    expect(sqlite(site.db, "SELECT sql FROM sqlite_schema WHERE name = 'api_keys_org';")).toMatch(/ON api_keys\(org_id\)/);

    const dumpAfterFirst = dump(site.db);
    const hashAfterFirst = await fileHash(site.db);
    const second = await runCli(["db", "migrate", "--db", site.db]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/nothing changed/);
    expect(dump(site.db)).toBe(dumpAfterFirst);
    expect(await fileHash(site.db)).toBe(hashAfterFirst);

    expect((await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out])).code).toBe(0);
  });

  it("a database made by an earlier cdsnap (user_version 2, no bookkeeping table) is adopted the same way", async () => {
    const site = await makeAdminSite(dir, adminSchema().replace("PRAGMA user_version = 7;", "PRAGMA user_version = 2;"));
    sqlite(site.db, "CREATE INDEX api_keys_org ON api_keys(org_id);");
    const migrated = await runCli(["db", "migrate", "--db", site.db]);
    expect(migrated.code).toBe(0);
    expect(sqlite(site.db, "PRAGMA user_version;").trim()).toBe("2");
    expect(sqlite(site.db, "SELECT count(*) FROM sqlite_schema WHERE name = 'api_keys_org';").trim()).toBe("1");
  });

  it("a missing contract column is named, with exit 2, by every command, and nothing is written", async () => {
    // The audit reads a tree too: one built from a complete database.
    const complete = await makeAdminSite(await mkdir(path.join(dir, "complete"), { recursive: true }).then(() => path.join(dir, "complete")));
    expect((await runCli(["build", "--db", complete.db, "--content", complete.content, "--out", complete.out])).code).toBe(0);
    const site = await makeAdminSite(dir, adminSchema({ omitColumn: "meta_pixel_id" }));
    const before = await fileHash(site.db);
    const runs = {
      build: await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out]),
      check: await runCli(["check", "--db", site.db, "--content", site.content]),
      audit: await runCli(["audit", "--db", site.db, "--out", complete.out]),
      // Given a tree, as serve refuses to start without one before it opens the database.
      serve: await runCli(["serve", "--db", site.db, "--content", site.content, "--out", complete.out, "--port", "0"]),
      keys: await runCli(["keys", "list", "--db", site.db]),
      migrate: await runCli(["db", "migrate", "--db", site.db]),
    };
    for (const [command, result] of Object.entries(runs)) {
      expect(result.code, command).toBe(2);
      expect(result.stderr, command).toMatch(/table organizations has no column meta_pixel_id/);
      expect(result.stderr, command).toMatch(/ALTER TABLE organizations ADD COLUMN meta_pixel_id TEXT/);
      expect(result.stderr, command).not.toMatch(/unexpected error|at .*\.js:\d+/);
    }
    expect(await fileHash(site.db)).toBe(before);
  });

  it("the ALTER TABLE a refusal suggests, run as given, makes the database build with the contract's default", async () => {
    const site = await makeAdminSite(dir, adminSchema({ omitColumn: "business_description" }));
    const refused = await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out]);
    expect(refused.code).toBe(2);
    const suggested = /add it: (ALTER TABLE [^\n)]*)\)/.exec(refused.stderr)?.[1];
    expect(suggested).toBe("ALTER TABLE organizations ADD COLUMN business_description TEXT NOT NULL DEFAULT ''");
    sqlite(site.db, `${suggested};`);
    const org = await buildCleanly(site);
    expect(org.businessDescription).toBe("");
  });

  it("a missing NOT NULL column without a default is suggested nullable, with the rows to fill", async () => {
    const site = await makeAdminSite(dir, adminSchema({ omitColumn: "status" }).replace(/, status, position\) VALUES/, ", position) VALUES").replace("'Hero', 'published', 0", "'Hero', 0").replace("'Promo', 'draft', 1", "'Promo', 1"));
    const refused = await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /table blocks has no column status \(add it: ALTER TABLE blocks ADD COLUMN status TEXT, then give every row a value, as the build refuses a NULL status\)/,
    );
  });

  it("db migrate adopts a database whose api_keys is a view: the index waits, unrecorded, and keys still list", async () => {
    const site = await makeAdminSite(dir, withContractView("api_keys", "admin_keys", "id, org_id, key_sha256, scopes, label, created_at, revoked_at"));
    const migrated = await runCli(["db", "migrate", "--db", site.db]);
    expect(migrated.stderr).toBe("");
    expect(migrated.code).toBe(0);
    expect(sqlite(site.db, "SELECT count(*) FROM sqlite_schema WHERE name = 'api_keys_org';").trim()).toBe("0");
    expect(sqlite(site.db, "SELECT count(*) FROM sqlite_schema WHERE name = 'cdsnap_schema';").trim()).toBe("0");
    const listed = await runCli(["keys", "list", "--db", site.db, "--org", "acme"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/k-read/);
  });

  it("a contract table may be a view over the admin tools' own table: the build reads it", async () => {
    const site = await makeAdminSite(
      dir,
      withContractView(
        "organizations",
        "admin_organizations",
        "id, name, slug, google_analytics_id, meta_pixel_id, gtm_container_id, business_description, allowed_origins",
      ),
    );
    const org = await buildCleanly(site);
    expect(org.name).toBe("Acme Roasters");
  });

  it("a missing contract table is named with exit 2, and db migrate creates it empty", async () => {
    const site = await makeAdminSite(dir, adminSchema({ omitTable: "block_pages" }).replace(/INSERT INTO block_pages[^;]*;/, ""));
    const refused = await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/no table block_pages/);

    const migrated = await runCli(["db", "migrate", "--db", site.db]);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/created the tables block_pages/);
    expect(sqlite(site.db, "SELECT count(*) FROM block_pages;").trim()).toBe("0");
    expect((await runCli(["build", "--db", site.db, "--content", site.content, "--out", site.out])).code).toBe(0);
  });
});
