/**
 * The build audits its next generation by difference: files it wrote are
 * inspected on their bytes as they are written, files it kept from the live
 * tree reuse the facts the previous audit recorded for the same bytes (unless
 * a secret changed), and organizations it carried are not audited again. A
 * full audit reads every file of the tree. On trees a faulty renderer damaged
 * at random, both must find exactly the same problems.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { mulberry32 } from "../../bench/prng.js";
import { expectationsOf } from "../../src/audit/audit-inputs.js";
import { auditTree, type AuditResult } from "../../src/audit/audit-tree.js";
import { readSecrets } from "../../src/audit/read-secrets.js";
import { createBuildAudit, recordedAudit } from "../../src/audit/run-audit.js";
import { DEMO_SECRET_VALUES } from "../../src/db/demo-seed.js";
import { openDatabase } from "../../src/db/open.js";
import { readSnapshot } from "../../src/db/read-snapshot.js";
import { planGeneration, readPreviousBuild } from "../../src/emit/plan-generation.js";
import { treeStoreOf } from "../../src/emit/tree-store.js";
import { discardGeneration, writeGeneration } from "../../src/emit/write-generation.js";
import { generationFiles } from "../../src/emit/file-table.js";
import { AuditFailedError, type Problem } from "../../src/errors.js";
import type { StoredSecret } from "../../src/audit/read-secrets.js";
import { parsedOnly, type OrgSnapshot, type PostRecord } from "../../src/model/snapshot.js";
import type { FrontMatter } from "../../src/model/sources.js";
import { renderDetail, renderReferences } from "../../src/render/contents.js";
import { planOrg, type OrgPlan, type RenderedFile } from "../../src/render/render-org.js";
import { loadBody, readPosts } from "../../src/sources/read-posts.js";
import { buildFixture, makeFixture, removeFixture, type Fixture } from "../fixtures/build-fixture.js";
import { hashTree } from "../fixtures/tree.js";

let site: Fixture;
const now = Date.now();

beforeAll(async () => {
  site = await makeFixture({ demo: true });
  await buildFixture(site, { now: new Date(now) });
});
afterAll(async () => removeFixture(site));


interface Round {
  snapshot: ReturnType<typeof readSnapshot>;
  secrets: StoredSecret[];
  /** Every post parsed (no previous build given), so a damage can change a record. */
  posts: { byOrg: Map<string, PostRecord[]> };
}

/** A JSON file of a plan, as its JSON (a canonical one parsed). */
const jsonOf = (file: RenderedFile): unknown => ("json" in file ? structuredClone(file.json) : JSON.parse(file.bytes().toString("utf8")));

/** Puts `file` back into the plan with its JSON as `edit` changed it; returns what `edit` says it did. */
function rewrite<T>(plan: OrgPlan, file: RenderedFile, edit: (json: T) => string): string {
  const json = jsonOf(file) as T;
  const done = edit(json);
  plan.files[plan.files.indexOf(file)] = { route: file.route, json };
  return done;
}

/** Changes a published post's front matter as the sources say it, while its files stay as they were rendered. */
function changeInSource(org: OrgSnapshot, round: Round, pick: <T>(list: readonly T[]) => T, change: (meta: FrontMatter) => FrontMatter): string | null {
  const list = round.posts.byOrg.get(org.id) ?? [];
  const published = list.filter((p) => p.meta.status === "published");
  if (published.length === 0) return null;
  const post = pick(published);
  list[list.indexOf(post)] = { ...post, meta: change(post.meta) };
  return post.meta.id;
}

/** One fault a renderer could make, applied to the plan of one organization; returns what it did, for the failure message. */
type Damage = (plan: OrgPlan, org: OrgSnapshot, round: Round, pick: <T>(list: readonly T[]) => T) => string;

const DAMAGES: Damage[] = [
  function leakDraftPost(plan, org, round) {
    const draft = round.posts.byOrg.get(org.id)?.find((p) => p.meta.status === "draft");
    if (!draft) return "no draft to leak";
    if (plan.files.some((f) => "id" in f.route && f.route.id === draft.meta.id)) return `${draft.meta.id} leaked already`;
    const detail = renderDetail(draft, loadBody(site.content, draft), new Map(org.categories.map((c) => [c.slug, c])));
    plan.files.push({ route: { kind: "content", orgId: org.id, id: draft.meta.id }, json: detail });
    plan.files.push({ route: { kind: "references", orgId: org.id, id: draft.meta.id }, json: renderReferences(detail) });
    return `leaked draft ${draft.meta.id}`;
  },
  function dropFile(plan, _org, _round, pick) {
    const file = pick(plan.files);
    plan.files.splice(plan.files.indexOf(file), 1);
    return `dropped ${file.route.kind}`;
  },
  function dropPost(plan, _org, _round, pick) {
    if (plan.posts.length === 0) return "no post to drop";
    const post = pick(plan.posts);
    plan.posts.splice(plan.posts.indexOf(post), 1);
    return `dropped the files of ${post.meta.id}`;
  },
  function wrongSlug(plan, _org, _round, pick) {
    const blocks = plan.files.filter((f) => f.route.kind === "block" || f.route.kind === "blockBySlug");
    if (blocks.length === 0) return "no block file";
    const file = pick(blocks);
    return rewrite<{ slug: string }>(plan, file, (json) => {
      json.slug = `${json.slug}-moved`;
      return `gave a ${file.route.kind} file another slug`;
    });
  },
  function secretInBlock(plan, _org, _round, pick) {
    const blocks = plan.files.filter((f) => f.route.kind === "block");
    if (blocks.length === 0) return "no block file";
    return rewrite<{ name: string }>(plan, pick(blocks), (json) => {
      json.name = `Pay with ${pick(DEMO_SECRET_VALUES)}`;
      return "put a secret into a block";
    });
  },
  function listRepeatsItem(plan) {
    const list = plan.files.find((f) => f.route.kind === "blocks");
    if (!list) return "no blocks list";
    return rewrite<{ items: unknown[] }>(plan, list, (json) => {
      if (json.items.length === 0) return "an empty blocks list";
      json.items.push(json.items[0]);
      return "repeated an item of the blocks list";
    });
  },
  function categoriesForget(plan) {
    const list = plan.files.find((f) => f.route.kind === "categories");
    if (!list) return "no categories list";
    return rewrite<{ items: unknown[] }>(plan, list, (json) => {
      json.items.pop();
      return "left a category out";
    });
  },
  // The sources change while the renderer keeps the files as they were.
  function draftStillServed(_plan, org, round, pick) {
    const id = changeInSource(org, round, pick, (meta) => ({ ...meta, status: "draft" }));
    return id ? `made ${id} a draft in its source only` : "no published post";
  },
  function slugRenamedInSource(_plan, org, round, pick) {
    const id = changeInSource(org, round, pick, (meta) => ({ ...meta, slug: `${meta.slug}-renamed` }));
    return id ? `renamed ${id}'s slug in its source only` : "no published post";
  },
  function listItemDiffers(plan, _org, _round, pick) {
    const list = plan.files.find((f) => f.route.kind === pick(["contents", "blocks"] as const));
    if (!list) return "no list";
    return rewrite<{ items: { name?: string; title?: string }[] }>(plan, list, (json) => {
      if (json.items.length === 0) return "an empty list";
      const item = pick(json.items);
      if (item.title !== undefined) item.title = `${item.title}, retitled`;
      else item.name = `${item.name}, renamed`;
      return `changed an item of the ${list.route.kind} list only`;
    });
  },
  function pageDiffers(plan, _org, _round, pick) {
    const pages = plan.files.filter((f) => f.route.kind === "contentsPage" || f.route.kind === "categoryContentsPage");
    if (pages.length === 0) return "no page";
    const page = pick(pages);
    return rewrite<{ items: { title: string }[]; meta: { pagination: { total: number } } }>(plan, page, (json) => {
      const fault = pick(["drop", "retitle", "miscount"] as const);
      if (fault === "miscount") json.meta.pagination.total += 1;
      else if (json.items.length === 0) return "an empty page";
      else if (fault === "drop") json.items.pop();
      else json.items[0]!.title += ", retitled";
      return `${fault}: a page only (${page.route.kind})`;
    });
  },
  function pagePastTheLast(plan, _org, _round, pick) {
    const pages = plan.files.filter((f) => f.route.kind === "contentsPage" || f.route.kind === "categoryContentsPage");
    if (pages.length === 0) return "no page";
    const page = pick(pages);
    if (!("page" in page.route)) return "not a page";
    plan.files.push({ route: { ...page.route, page: "99" }, json: jsonOf(page) });
    return `a ${page.route.kind} past the last page`;
  },
  function contentsForgets(plan) {
    const list = plan.files.find((f) => f.route.kind === "contents");
    if (!list) return "no contents list";
    return rewrite<{ items: unknown[] }>(plan, list, (json) => {
      json.items.splice(0, 1);
      return "left a post out of the list";
    });
  },
];

const key = (p: Problem) => `${p.where}\n${p.message}`;

test("on randomly damaged trees, the build's audit by difference finds exactly what a full audit finds", async () => {
  const random = mulberry32(20261126);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const liveBefore = await hashTree(site.out);
  const store = treeStoreOf(site.out);
  let failed = 0;
  for (let round = 0; round < 24; round++) {
    const db = openDatabase(site.db, { readonly: true });
    const snapshot = readSnapshot(db);
    const secrets = readSecrets(db);
    db.close();
    const read = await readPosts(site.content);
    const posts = { byOrg: new Map([...read.byOrg].map(([orgId, list]) => [orgId, parsedOnly(list)])) };
    const inputs: Round = { snapshot, secrets, posts };
    // Some organizations planned, the others carried as an `--org` build carries them; the first one always planned.
    const planned = snapshot.orgs.filter((_org, i) => i === 0 || random() < 0.5);
    const plans = planned.map((org) => planOrg(org, posts.byOrg.get(org.id) ?? [], now));
    const done: string[] = [];
    for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
      const i = Math.floor(random() * plans.length);
      done.push(`${planned[i]!.id}: ${pick(DAMAGES)(plans[i]!, planned[i]!, inputs, pick)}`);
    }

    const previous = await readPreviousBuild(store);
    const plannedIds = new Set(planned.map((org) => org.id));
    const plan = planGeneration(previous, plans, { keep: (orgId) => !plannedIds.has(orgId), codeVersion: "test", pageSize: 20 });
    const audit = createBuildAudit({ orgs: planned, rowIds: snapshot.rowIds }, posts.byOrg, secrets, now, previous.state.audited);
    const written = await writeGeneration(store, plan, {
      loadBody: (post) => loadBody(site.content, post),
      contentDir: site.content,
      inspection: audit.inspection,
      force: true,
    });
    if (written.kind !== "written") throw new Error("a forced build makes a generation");
    try {
      const files = generationFiles(written.files);
      const byDifference = await audit
        .check(written.gen.tree, recordedAudit(previous, files), files, written.inspected, written.replay, plan.keptOrgs)
        .then(
          () => [] as Problem[],
          (error: unknown) => {
            if (!(error instanceof AuditFailedError)) throw error;
            return error.problems;
          },
        );
      const full: AuditResult = await auditTree(written.gen.tree, expectationsOf(planned, snapshot.rowIds, posts.byOrg, now), secrets);
      expect(byDifference.map(key).sort(), `round ${round}: ${done.join("; ")}`).toEqual(full.problems.map(key).sort());
      if (full.problems.length > 0) failed++;
    } finally {
      await discardGeneration(written.gen);
    }
  }
  // The damage was real: most rounds made a tree no audit passes.
  expect(failed).toBeGreaterThanOrEqual(12);
  expect(await hashTree(site.out)).toBe(liveBefore);
}, 120_000);
