/**
 * The build audits its next generation before the swap: a tree that would
 * leak a secret or an unpublished item is never published, the build fails with
 * the audit's problems, and the live tree stays byte for byte as it was.
 */
import { readdir, readFile, readlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { fileOf } from "../../src/api-paths.js";
import { readSecrets } from "../../src/audit/read-secrets.js";
import { createBuildAudit, recordedAudit } from "../../src/audit/run-audit.js";
import { DEMO_SECRET_VALUES } from "../../src/db/demo-seed.js";
import { openDatabase } from "../../src/db/open.js";
import { readSnapshot } from "../../src/db/read-snapshot.js";
import { parsedOnly } from "../../src/model/snapshot.js";
import { planGeneration, readPreviousBuild } from "../../src/emit/plan-generation.js";
import { discardGeneration, writeGeneration } from "../../src/emit/write-generation.js";
import { generationFiles } from "../../src/emit/file-table.js";
import { treeStoreOf } from "../../src/emit/tree-store.js";
import { AuditFailedError } from "../../src/errors.js";
import type { Block } from "../../src/model/api.js";
import { renderDetail, renderReferences } from "../../src/render/contents.js";
import { planOrg } from "../../src/render/render-org.js";
import { loadBody, readPosts } from "../../src/sources/read-posts.js";
import { buildFixture, type Fixture, makeFixture, removeFixture } from "../fixtures/build-fixture.js";
import { withDb } from "../fixtures/database.js";
import { hashTree, plantJson, readTreeJson } from "../fixtures/tree.js";
import { buildArgs, cliPath, runCli } from "../fixtures/cli.js";

const STRIPE = DEMO_SECRET_VALUES[0]!;
const SMTP = DEMO_SECRET_VALUES[1]!;
let site: Fixture;

beforeAll(async () => {
  await cliPath();
});
beforeEach(async () => {
  // The demo built at the clock, as `cdsnap build` builds it.
  site = await makeFixture({ demo: true });
  await buildFixture(site, { now: new Date() });
});
afterEach(async () => {
  await removeFixture(site);
});

interface Live {
  hash: string;
  link: string;
  gens: string[];
}

async function live(): Promise<Live> {
  return {
    hash: await hashTree(site.out),
    link: await readlink(site.out),
    gens: (await readdir(treeStoreOf(site.out).gensDir)).sort(),
  };
}

test("a build whose organization file would hold a secret fails its audit and leaves the live tree as it was", async () => {
  const before = await live();
  withDb(site.db, (db) => db.prepare("UPDATE organizations SET name = ? WHERE id = 'demo'").run(STRIPE));

  const error = await buildFixture(site, { now: new Date() }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AuditFailedError);
  const failed = error as AuditFailedError;
  expect(failed.code).toBe("audit_failed");
  expect(failed.message).toContain("nothing was published and the previous tree is still served");
  expect(failed.problems).toContainEqual({
    where: fileOf({ kind: "organization", orgId: "demo" }),
    message: expect.stringContaining('holds the value of secret "stripe_secret_key" of organization demo (as stored)'),
  });
  expect(JSON.stringify(failed.problems)).not.toContain(STRIPE);
  // The live tree, its link and the generations are untouched; the failed generation is gone.
  expect(await live()).toEqual(before);
});

test("cdsnap build exits 1 listing the audit's problems when a JSON-escaped secret would be published", async () => {
  const before = await live();
  withDb(site.db, (db) =>
    db.prepare("UPDATE organizations SET business_description = ? WHERE id = 'demo'").run(`Mail us. ${SMTP}`),
  );
  const result = await runCli(buildArgs(site));
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(
    `${fileOf({ kind: "organization", orgId: "demo" })}: holds the value of secret "smtp_password" of organization demo (JSON-escaped)`,
  );
  expect(result.stderr).toMatch(/build failed: the audit of the new tree found 1 problem; nothing was published/);
  for (const form of [SMTP, JSON.stringify(SMTP).slice(1, -1)]) {
    expect(result.stderr).not.toContain(form);
    expect(result.stdout).not.toContain(form);
  }
  expect(await live()).toEqual(before);
});

test("a generation holding an unpublished post (a renderer bug) is refused by the pre-swap audit", async () => {
  const before = await live();
  const now = Date.now();
  const db = openDatabase(site.db, { readonly: true });
  const snapshot = readSnapshot(db);
  const secrets = readSecrets(db);
  db.close();
  const posts = await readPosts(site.content);
  const plans = snapshot.orgs.map((org) => planOrg(org, posts.byOrg.get(org.id) ?? [], now));
  // Simulate the bug: the draft post is rendered like a published one, by id and references.
  const demo = snapshot.orgs.find((o) => o.id === "demo")!;
  const draft = parsedOnly(posts.byOrg.get("demo")!).find((p) => p.meta.id === "post-0016")!;
  const detail = renderDetail(draft, draft.body!, new Map(demo.categories.map((c) => [c.slug, c])));
  const files = plans.find((r) => r.orgId === "demo")!.files;
  files.push({ route: { kind: "content", orgId: "demo", id: "post-0016" }, json: detail });
  files.push({ route: { kind: "references", orgId: "demo", id: "post-0016" }, json: renderReferences(detail) });

  // The build's own stages after planning, with the buggy plan.
  const store = treeStoreOf(site.out);
  const previous = await readPreviousBuild(store);
  const plan = planGeneration(previous, plans, { keep: () => false, codeVersion: "test", pageSize: 20 });
  const audit = createBuildAudit(snapshot, posts.byOrg, secrets, now, previous.state.audited);
  const written = await writeGeneration(store, plan, { loadBody: (post) => loadBody(site.content, post), contentDir: site.content, inspection: audit.inspection });
  if (written.kind !== "written") throw new Error("the buggy plan must write files");
  const table = generationFiles(written.files);
  const error = (await audit
    .check(written.gen.tree, recordedAudit(previous, table), table, written.inspected, written.replay)
    .catch((e: unknown) => e)) as AuditFailedError;
  await discardGeneration(written.gen);
  expect(error).toBeInstanceOf(AuditFailedError);
  expect(error.problems).toEqual([
    {
      where: fileOf({ kind: "content", orgId: "demo", id: "post-0016" }),
      message: expect.stringMatching(/^serves post "post-0016", which is draft: only published posts may be reachable/),
    },
    {
      where: fileOf({ kind: "references", orgId: "demo", id: "post-0016" }),
      message: expect.stringMatching(/^serves post "post-0016", which is draft/),
    },
  ]);
  expect(await live()).toEqual(before);
});

describe("a secret added since the live tree was audited", () => {
  // The title of post-0008, published in its two files, the list and the pages holding it: harmless until it is stored as a secret.
  const TITLE = "A day on the roaster";
  const POST_FILE = "2025/a-day-on-the-roaster.md";
  const filesHoldingTitle = [
    fileOf({ kind: "categoryContentsPage", orgId: "demo", slug: "roasting", page: "1" }),
    fileOf({ kind: "contents", orgId: "demo" }),
    fileOf({ kind: "contentBySlug", orgId: "demo", slug: "a-day-on-the-roaster" }),
    fileOf({ kind: "contentsPage", orgId: "demo", page: "1" }),
    fileOf({ kind: "content", orgId: "demo", id: "post-0008" }),
  ];
  const storeSecret = (name: string, value: string) =>
    withDb(site.db, (db) => db.prepare("INSERT INTO organization_secrets (org_id, name, value) VALUES ('demo', ?, ?)").run(name, value));
  const failedBuild = () =>
    buildFixture(site, { now: new Date() }).then(
      () => expect.unreachable("the build passed its audit"),
      (error: unknown) => error as AuditFailedError,
    );

  test("fails the next build though nothing else changed, naming every file that holds it; the live tree stays", async () => {
    const before = await live();
    storeSecret("roast_log_token", TITLE);

    const error = await failedBuild();
    expect(error).toBeInstanceOf(AuditFailedError);
    expect(error.problems.map((p) => p.where).sort()).toEqual(filesHoldingTitle);
    for (const problem of error.problems) {
      expect(problem.message).toMatch(/^holds the value of secret "roast_log_token" of organization demo \(as stored\)/);
    }
    // Those bytes are live already: the message says so, and never quotes the value.
    expect(error.message).toContain("though it holds such a file too: the stored secrets changed since it was audited");
    expect(JSON.stringify({ message: error.message, problems: error.problems })).not.toContain(TITLE);
    expect(await live()).toEqual(before);
    // It fails every build until the file no longer holds the value.
    expect((await failedBuild()).problems).toHaveLength(filesHoldingTitle.length);
    expect(await live()).toEqual(before);
  });

  test("fails a build that rewrites other files too: the unchanged files' clean results are not reused", async () => {
    const before = await live();
    storeSecret("roast_log_token", TITLE);
    withDb(site.db, (db) => db.prepare("UPDATE organizations SET name = 'Harbor Tea Rooms' WHERE id = 'harbor'").run());

    const error = await failedBuild();
    expect(error.problems.map((p) => p.where).sort()).toEqual(filesHoldingTitle);
    expect(await live()).toEqual(before);
  });

  test("fails a build whose sources were touched but render the same bytes", async () => {
    const before = await live();
    storeSecret("roast_log_token", TITLE);
    const post = path.join(site.content, "demo", POST_FILE);
    await writeFile(post, await readFile(post));

    expect((await failedBuild()).problems.map((p) => p.where).sort()).toEqual(filesHoldingTitle);
    expect(await live()).toEqual(before);
  });

  test("once the post no longer holds the value the build publishes, and a build with nothing changed is a no-op again", async () => {
    storeSecret("roast_log_token", TITLE);
    await failedBuild();
    const post = path.join(site.content, "demo", POST_FILE);
    await writeFile(post, (await readFile(post, "utf8")).replace(`title: ${TITLE}`, "title: A roast day, hour by hour"));

    expect((await buildFixture(site, { now: new Date() })).changed).toBe(true);
    const detail = await readTreeJson<{ title: string }>(site.out, fileOf({ kind: "content", orgId: "demo", id: "post-0008" }));
    expect(detail.title).toBe("A roast day, hour by hour");
    expect((await buildFixture(site, { now: new Date() })).changed).toBe(false);
  });

  test("a rotated secret no file holds is audited once, then builds with nothing changed are no-ops again", async () => {
    const before = await live();
    withDb(site.db, (db) => db.prepare("UPDATE organization_secrets SET value = ? WHERE name = 'stripe_secret_key' AND org_id = 'demo'").run("sk_test_ROTATED_0f3e5d7c9b1a"));
    await buildFixture(site, { now: new Date() });
    expect(await hashTree(site.out)).toBe(before.hash);
    expect((await buildFixture(site, { now: new Date() })).changed).toBe(false);
  });
});

test("a slug that is a secret's value fails the audit by the path of its by-slug file, and the report never prints it", async () => {
  const before = await live();
  const slug = "a-day-on-the-roaster";
  withDb(site.db, (db) =>
    db.prepare("INSERT INTO organization_secrets (org_id, name, value) VALUES ('demo', 'door_code', ?)").run(slug),
  );
  const result = await runCli(buildArgs(site));
  expect(result.code).toBe(1);
  // The path is named with the secret's name in place of its value.
  const bySlug = "api/organizations/demo/contents/by-slug/<secret door_code of demo>.json";
  expect(result.stderr).toContain(`${bySlug}: its path holds the value of secret "door_code" of organization demo (as stored)`);
  expect(result.stderr).not.toContain(slug);
  expect(result.stdout).not.toContain(slug);
  expect(await live()).toEqual(before);
});

test("a source problem quoting a line that holds a secret names the secret instead, and the live tree stays", async () => {
  const before = await live();
  const post = ["---", "id: leak", `title: Our key ${STRIPE}: keep it`, "slug: leak", "status: draft", "publishedAt: 2026-01-01", "authorName: Ada", "---", "Body."];
  await writeFile(path.join(site.content, "demo", "leak.md"), post.join("\n"));

  const result = await runCli(buildArgs(site));
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("demo/leak.md:3: front matter: a value containing ': ' must be quoted: title: \"Our key <secret stripe_secret_key of demo>: keep it\"");
  expect(result.stderr).not.toContain(STRIPE);
  expect(await live()).toEqual(before);
});

test("an --org build with --verify audits the organizations it carries over too, for secrets and strays", async () => {
  // A secret in a demo file of the live tree (replaced, not edited: its inode is shared).
  const heroRel = fileOf({ kind: "block", orgId: "demo", id: "blk-hero" });
  const hero = await readTreeJson<Block>(site.out, heroRel);
  await plantJson(site.out, heroRel, { ...hero, name: `Hero ${STRIPE}` });
  withDb(site.db, (db) => db.prepare("UPDATE organizations SET name = 'Harbor Tea Rooms' WHERE id = 'harbor'").run());
  const before = await live();

  // Only cdsnap writes a generation: a plain build trusts its state, where --verify looks at every file.
  const result = await runCli(buildArgs(site, "--org", "harbor", "--verify"));
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(`${heroRel}: holds the value of secret "stripe_secret_key" of organization demo`);
  // The carried-over demo files disagree with each other now, and say so.
  expect(result.stderr).toContain(`${fileOf({ kind: "blockBySlug", orgId: "demo", slug: "home-hero" })}: differs from ${heroRel}`);
  expect(await live()).toEqual(before);

  // Once the demo file is right again, the same --org build passes its audit and is published.
  await plantJson(site.out, heroRel, hero);
  const ok = await runCli(buildArgs(site, "--org", "harbor", "--verify"));
  expect(ok.stderr).toBe("");
  expect(ok.code).toBe(0);
  const org = await readTreeJson<{ name: string }>(site.out, fileOf({ kind: "organization", orgId: "harbor" }));
  expect(org.name).toBe("Harbor Tea Rooms");
  expect(path.basename(await readlink(site.out))).toBe("tree");
});
