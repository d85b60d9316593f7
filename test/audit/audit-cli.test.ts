/**
 * `cdsnap audit` through the real bundled CLI, on a real build of the demo:
 * a fresh tree passes; every way a tree can be unsafe to publish fails with
 * exit 1 and a message naming the file and what to do.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { fileOf, type Route } from "../../src/api-paths.js";
import { DEMO_SECRET_VALUES } from "../../src/db/demo-seed.js";
import type { Block, BlockList, ContentDetail, ContentList } from "../../src/model/api.js";
import { buildFixture, type Fixture, makeFixture, removeFixture } from "../fixtures/build-fixture.js";
import { withDb } from "../fixtures/database.js";
import { listFiles, plant, plantJson, readTreeJson, removeTreeFile } from "../fixtures/tree.js";
import { auditArgs, cliPath, type CliResult, runCli } from "../fixtures/cli.js";

const STRIPE = DEMO_SECRET_VALUES[0]!; // sk_test_DEMO_SECRET_…
const SMTP = DEMO_SECRET_VALUES[1]!; // holds `"` and `\`, so its JSON-escaped form differs
const file = (route: Route) => fileOf(route);
const demo = "demo";
const ORGS = "api/organizations";

let site: Fixture;

beforeAll(async () => {
  await cliPath(); // bundle once, outside any single test's time
});
beforeEach(async () => {
  // The demo built at the clock: the CLI audit decides what is scheduled by the clock too.
  site = await makeFixture({ demo: true });
  await buildFixture(site, { now: new Date() });
});
afterEach(async () => {
  await removeFixture(site);
});

/** The audit output never carries a secret, in either form. */
function expectNoSecretIn(result: CliResult): void {
  for (const secret of DEMO_SECRET_VALUES) {
    for (const form of [secret, JSON.stringify(secret).slice(1, -1)]) {
      expect(result.stdout).not.toContain(form);
      expect(result.stderr).not.toContain(form);
    }
  }
}

async function auditFails(options: { withContent?: boolean } = {}): Promise<CliResult> {
  const result = await runCli(auditArgs(site, options));
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toMatch(/audit failed: \d+ problems? in \d+ files checked/);
  expectNoSecretIn(result);
  return result;
}

/** A published post's detail, re-labelled as another post: what a renderer bug could write. */
async function detailAs(id: string, slug: string): Promise<ContentDetail> {
  const detail = await readTreeJson<ContentDetail>(site.out, file({ kind: "content", orgId: demo, id: "post-0001" }));
  return { ...detail, id, slug, title: `Leaked ${id}` };
}

describe("a fresh tree", () => {
  test("passes the audit against the database and the posts: exit 0, every file counted", async () => {
    const result = await runCli(auditArgs(site));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const count = (await listFiles(site.out)).length;
    expect(result.stdout).toContain(`audit passed: ${count} files checked`);
    expect(result.stdout).toContain("posts checked against their sources");
  });

  test("passes without --content too, and says the post-source checks were skipped", async () => {
    const result = await runCli(auditArgs(site, { withContent: false }));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("post-source checks skipped");
    expect(result.stderr).toMatch(/warning: posts: no content folder was given \(--content\), so the post-source checks were skipped/);
  });

  test("--json prints the result as one object; CDSNAP_* variables stand in for the flags", async () => {
    const result = await runCli(["audit", "--json"], { env: { CDSNAP_DB: site.db, CDSNAP_OUT: site.out, CDSNAP_CONTENT: site.content } });
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as { ok: boolean; problems: unknown[]; warnings: unknown[]; filesChecked: number };
    expect(parsed).toMatchObject({ ok: true, problems: [], warnings: [], postSourcesChecked: true });
    expect(parsed.filesChecked).toBe((await listFiles(site.out)).length);
  });
});

describe("sources the build refuses", () => {
  test("a post folder with no organization row is reported, as the build reports it: the audit cannot vouch for the tree", async () => {
    await mkdir(path.join(site.content, "ghost"), { recursive: true });
    const post = "---\nid: p\ntitle: P\nslug: p\nstatus: published\npublishedAt: 2026-01-10\nauthorName: Ada\n---\nbody\n";
    await writeFile(path.join(site.content, "ghost", "p.md"), post);
    const result = await auditFails();
    expect(result.stderr).toMatch(/ghost\/: no organization has the id "ghost".*cannot vouch for the tree/);
  });
});

describe("secrets", () => {
  test("a secret planted into a rendered file fails the audit, naming the file and the secret but never its value", async () => {
    const rel = file({ kind: "block", orgId: demo, id: "blk-hero" });
    const block = await readTreeJson<Block>(site.out, rel);
    block.fields[0] = { key: "headline", type: "text", value: `Our key is ${STRIPE}, keep it safe` };
    await plantJson(site.out, rel, block);

    const result = await auditFails();
    expect(result.stderr).toContain(`${rel}: holds the value of secret "stripe_secret_key" of organization demo (as stored)`);
    expect(result.stderr).toContain("rotate the secret");

    const json = await runCli(auditArgs(site, {}, "--json"));
    expect(json.code).toBe(1);
    expectNoSecretIn(json);
    const parsed = JSON.parse(json.stdout) as { ok: boolean; problems: { where: string; message: string }[] };
    expect(parsed.ok).toBe(false);
    expect(parsed.problems).toContainEqual({ where: rel, message: expect.stringContaining('secret "stripe_secret_key"') });
  });

  test("a secret in its JSON-escaped form is found too (a value with quote and backslash, through JSON.stringify)", async () => {
    expect(JSON.stringify(SMTP).slice(1, -1)).not.toBe(SMTP);
    const rel = file({ kind: "content", orgId: demo, id: "post-0001" });
    const detail = await readTreeJson<ContentDetail>(site.out, rel);
    // JSON.stringify escapes the value: the file holds `pa\"ss\\word`, not the raw secret.
    await plantJson(site.out, rel, { ...detail, content: `${detail.content}\n\nsmtp: ${SMTP}\n` });

    const result = await auditFails();
    expect(result.stderr).toContain(`${rel}: holds the value of secret "smtp_password" of organization demo (JSON-escaped)`);
  });

  test("a secret in a file no path describes is found as well", async () => {
    await plant(site.out, `${ORGS}/demo/notes.txt`, `stripe: ${STRIPE}\n`);
    const result = await auditFails();
    expect(result.stderr).toContain(`${ORGS}/demo/notes.txt: holds the value of secret "stripe_secret_key" of organization demo`);
    expect(result.stderr).toContain(`${ORGS}/demo/notes.txt: is not a file the interface describes`);
  });

  test("a secret spelled with JSON escapes is found: what a client parses is what counts", async () => {
    const rel = file({ kind: "block", orgId: demo, id: "blk-hero" });
    const block = await readTreeJson<Block>(site.out, rel);
    block.fields[0] = { key: "headline", type: "text", value: "@@" };
    // `\u0073` is the `s` the value starts with: the bytes never hold the secret as stored or JSON-escaped.
    expect(STRIPE.startsWith("s")).toBe(true);
    await plant(site.out, rel, JSON.stringify(block).replace('"@@"', `"\\u0073${STRIPE.slice(1)}"`));

    const result = await auditFails();
    expect(result.stderr).toContain(`${rel}: holds the value of secret "stripe_secret_key" of organization demo`);
  });

  test("a secret in a file's path is found, and the report names it by the secret's name, text and JSON alike", async () => {
    const slug = "welcome-to-the-northwind-journal";
    withDb(site.db, (db) =>
      db.prepare("INSERT INTO organization_secrets (org_id, name, value) VALUES ('demo', 'door_code', ?)").run(slug),
    );
    await plant(site.out, `${ORGS}/demo/${STRIPE}.json`, "{}");

    const result = await auditFails();
    expect(result.stderr).toContain(
      `${ORGS}/demo/contents/by-slug/<secret door_code of demo>.json: its path holds the value of secret "door_code" of organization demo`,
    );
    // A stray whose bytes hold nothing secret: only its name does.
    expect(result.stderr).toContain(
      `${ORGS}/demo/<secret stripe_secret_key of demo>.json: its path holds the value of secret "stripe_secret_key" of organization demo`,
    );
    expect(result.stderr).not.toContain(`${ORGS}/demo/<secret stripe_secret_key of demo>.json: holds the value`);

    const json = await runCli(auditArgs(site, {}, "--json"));
    expect(json.code).toBe(1);
    expectNoSecretIn(json);
    for (const output of [result.stdout, result.stderr, json.stdout]) expect(output).not.toContain(slug);
  });

  test("a secret shorter than 6 characters is a warning, not a failure", async () => {
    withDb(site.db, (db) =>
      db.prepare("INSERT INTO organization_secrets (org_id, name, value) VALUES ('demo', 'pin', 'a')").run(),
    );
    const result = await runCli(auditArgs(site));
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      "warning: organization_secrets[org_id=demo name=pin]: the value is shorter than 6 characters and was not searched for",
    );
  });
});

describe("nothing unpublished is reachable", () => {
  test("a draft post's file fails the audit, saying it is a draft", async () => {
    const rel = file({ kind: "content", orgId: demo, id: "post-0016" });
    await plantJson(site.out, rel, await detailAs("post-0016", "anniversary-blend"));
    const result = await auditFails();
    expect(result.stderr).toContain(
      `${rel}: serves post "post-0016", which is draft: only published posts may be reachable by any path`,
    );
  });

  test("archived and scheduled posts by slug and by references fail too", async () => {
    const archived = file({ kind: "contentBySlug", orgId: demo, slug: "summer-sale-2025" });
    const scheduled = file({ kind: "references", orgId: demo, id: "post-0018" });
    await plantJson(site.out, archived, await detailAs("post-0017", "summer-sale-2025"));
    await plantJson(site.out, scheduled, []);
    const result = await auditFails();
    expect(result.stderr).toContain(`${archived}: serves post "post-0017", whose slug belongs to archived post "post-0017"`);
    expect(result.stderr).toContain(`${scheduled}: serves post "post-0018", which is scheduled`);
  });

  test("without --content a planted post file still fails: the tree's own paths disagree", async () => {
    const rel = file({ kind: "content", orgId: demo, id: "post-0016" });
    await plantJson(site.out, rel, await detailAs("post-0016", "anniversary-blend"));
    const result = await auditFails({ withContent: false });
    expect(result.stderr).toContain(
      `${file({ kind: "contentBySlug", orgId: demo, slug: "anniversary-blend" })}: is missing: post "post-0016" is served at ${rel}`,
    );
    expect(result.stderr).toContain(`${file({ kind: "contents", orgId: demo })}: does not list post "post-0016"`);
  });

  test("an unpublished block's file fails the audit, by id and by slug", async () => {
    const hero = await readTreeJson<Block>(site.out, file({ kind: "block", orgId: demo, id: "blk-hero" }));
    const draft = { ...hero, id: "blk-holiday-promo", slug: "holiday-promo" };
    await plantJson(site.out, file({ kind: "block", orgId: demo, id: "blk-holiday-promo" }), draft);
    await plantJson(site.out, file({ kind: "blockBySlug", orgId: demo, slug: "summer-sale-banner" }), {
      ...hero,
      id: "blk-summer-sale",
      slug: "summer-sale-banner",
    });
    const result = await auditFails();
    expect(result.stderr).toContain(
      `${file({ kind: "block", orgId: demo, id: "blk-holiday-promo" })}: serves block "blk-holiday-promo", which is draft`,
    );
    expect(result.stderr).toContain(
      `${file({ kind: "blockBySlug", orgId: demo, slug: "summer-sale-banner" })}: serves block "blk-summer-sale", ` +
        'whose slug belongs to archived block "blk-summer-sale"',
    );
  });

  test("a list item of a draft post or an archived block fails the audit, naming the list and the item", async () => {
    const contentsRel = file({ kind: "contents", orgId: demo });
    const contents = await readTreeJson<ContentList>(site.out, contentsRel);
    const { content: _c, references: _r, ...summary } = await detailAs("post-0016", "anniversary-blend");
    contents.items.push(summary);
    await plantJson(site.out, contentsRel, contents);

    const blocksRel = file({ kind: "blocks", orgId: demo });
    const blocks = await readTreeJson<BlockList>(site.out, blocksRel);
    blocks.items.unshift({ ...blocks.items[0]!, id: "blk-summer-sale", slug: "summer-sale-banner" });
    await plantJson(site.out, blocksRel, blocks);

    const result = await auditFails();
    const last = contents.items.length - 1;
    expect(result.stderr).toContain(`${contentsRel}: items.${last} is post "post-0016", which is draft`);
    expect(result.stderr).toContain(`${blocksRel}: items.0 is block "blk-summer-sale", which is archived`);
  });
});

describe("every published item is reachable by every path", () => {
  test("deleting a published post's by-slug file fails the audit, naming the missing file", async () => {
    const rel = file({ kind: "contentBySlug", orgId: demo, slug: "welcome-to-the-northwind-journal" });
    await removeTreeFile(site.out, rel);
    const result = await auditFails();
    expect(result.stderr).toContain(
      `${rel}: is missing: post "post-0001" is published in the content sources, so it must be reachable by its slug`,
    );
    // Without the sources, the id file and the list still say the post exists.
    const inner = await auditFails({ withContent: false });
    expect(inner.stderr).toContain(`${rel}: is missing: post "post-0001" is served at`);
  });

  test("a missing block list, references file or organization file is named", async () => {
    await removeTreeFile(site.out, file({ kind: "blocks", orgId: demo }));
    await removeTreeFile(site.out, file({ kind: "references", orgId: demo, id: "post-0002" }));
    await removeTreeFile(site.out, file({ kind: "organization", orgId: "harbor" }));
    const result = await auditFails();
    expect(result.stderr).toContain(`${file({ kind: "blocks", orgId: demo })}: is missing: every organization has this file`);
    expect(result.stderr).toContain(`${file({ kind: "references", orgId: demo, id: "post-0002" })}: is missing: post "post-0002"`);
    expect(result.stderr).toContain(`${file({ kind: "organization", orgId: "harbor" })}: is missing`);
  });

  test("a by-slug file that differs from the id file fails", async () => {
    const rel = file({ kind: "blockBySlug", orgId: demo, slug: "home-hero" });
    const hero = await readTreeJson<Block>(site.out, rel);
    await plantJson(site.out, rel, { ...hero, name: "Edited by hand" });
    const result = await auditFails();
    expect(result.stderr).toContain(`${rel}: differs from ${file({ kind: "block", orgId: demo, id: "blk-hero" })}`);
  });
});

describe("no file the interface does not describe", () => {
  test("stray files, unknown organizations, broken JSON and extra members each fail with their own message", async () => {
    await plant(site.out, ".DS_Store", "x");
    await plantJson(site.out, `${ORGS}/ghost/organization.json`, {});
    await plant(site.out, file({ kind: "categories", orgId: "harbor" }), "{not json");
    const orgRel = file({ kind: "organization", orgId: demo });
    await plantJson(site.out, orgRel, { ...(await readTreeJson<object>(site.out, orgRel)), smtpPassword: "redacted" });
    await symlink(path.join(site.out, orgRel), path.join(site.out, `${ORGS}/demo/link.json`));

    const result = await auditFails();
    expect(result.stderr).toContain(".DS_Store: is not a file the interface describes");
    expect(result.stderr).toContain(`${ORGS}/ghost/organization.json: belongs to organization "ghost", which has no row in the database`);
    expect(result.stderr).toContain(`${file({ kind: "categories", orgId: "harbor" })}: is not valid JSON`);
    expect(result.stderr).toMatch(
      new RegExp(`${orgRel}: does not match the organization response of the interface \\(\\(top\\): Unrecognized key: "smtpPassword"`),
    );
    expect(result.stderr).toContain(`${ORGS}/demo/link.json: is not a regular file`);
  });
});

describe("usage", () => {
  test("a missing --db or --out is a usage error (exit 2); so is an --out that does not exist, or links nowhere", async () => {
    expect((await runCli(["audit", "--out", site.out])).code).toBe(2);
    expect((await runCli(["audit", "--db", site.db])).code).toBe(2);
    const missing = await runCli(["audit", "--db", site.db, "--out", path.join(site.dir, "nowhere")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("does not exist; build it first with cdsnap build");
    const dangling = path.join(site.dir, "dangling");
    await symlink(path.join(site.dir, "gone"), dangling);
    const broken = await runCli(["audit", "--db", site.db, "--out", dangling]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`--out ${dangling} is not a folder (or a link to one)`);
  });
});
