/**
 * `cdsnap build`, as a list of stages run in order, each taking what the
 * stages before it produced and returning its own typed result:
 *
 *     readPrevious  the live generation and the state it was built from
 *     loadSources   every source read and validated (a bad one fails here, before anything is written: D9)
 *     plan          organization files rendered, each post reused or to be rendered, files removed
 *     write         the next generation: only what differs is rendered and written (the one writer)
 *     audit         the next generation checked before it can be published
 *     publish       the atomic swap, and the state for the next build
 *     reconcile     organization files brought up to PATCHes committed meanwhile (D14)
 *     announce      the edge document, the changed paths and tags, the report
 *
 * The report's `phasesMs` are the stages' wall times, by these names.
 *
 * With `preview`, the same stages run a second time into a tree store of its
 * own beside `--out` (`<out>.preview`), with the preview tree's publication
 * rule: every post but an archived one, each with its status. The public
 * tree is built first and exactly as without it.
 */
import { createHash } from "node:crypto";
import { lstatSync, readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { orgInFolder, parseApiPath, partOfFile, pathOf } from "./api-paths.js";
import { readSecrets } from "./audit/read-secrets.js";
import { createBuildAudit, recordedAudit, secretsKeyFor } from "./audit/run-audit.js";
import { needlesOf, redactSecrets } from "./audit/scan-secrets.js";
import type { OrgRows } from "./db/read-snapshot.js";
import type { AuditState, FileEntry, StoredOrg } from "./emit/build-state.js";
import { generationFiles } from "./emit/file-table.js";
import { writeEdgeDocumentOf } from "./edge/publish-document.js";
import {
  editedInPlaceAt,
  keptPartsOf,
  needsRecordAt,
  planGeneration,
  postsDigestOf,
  previousPosts,
  readPreviousBuild,
  proxyFileOf,
  rowsDigestOf,
  type GenerationPlan,
  type PreviousBuild,
} from "./emit/plan-generation.js";
import { keepLive, publishGeneration } from "./emit/publish-generation.js";
import { openRecordSpool } from "./emit/record-spool.js";
import { reconcileOrganizationFiles } from "./emit/reconcile.js";
import { acquireBuildLock, assertReplaceable, previewOutOf, treeStoreOf, type TreeStore } from "./emit/tree-store.js";
import { changedPathsOf, discardGeneration, writeGeneration, type ChangedPaths, type WriteResult } from "./emit/write-generation.js";
import { InvalidSourcesError, UsageError, type Problem } from "./errors.js";
import type { Publication } from "./model/shapes.js";
import type { RecordSpool } from "./model/snapshot.js";
import { EDGE_FILE_LIMIT, postsWarned, treeFileWarnings, type TreeFileSize } from "./model/edge-file-limit.js";
import { changedTags } from "./on-change/change-set.js";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./render/pages.js";
import { planOrg, type OrgPlan } from "./render/render-org.js";
import type { BuildReport, OrgReport } from "./report.js";
import { kindOf, ROUTES } from "./route-table.js";
import { loadSources } from "./sources/load-sources.js";
import { loadBody } from "./sources/read-posts.js";

export interface BuildOptions {
  db: string;
  content: string;
  out: string;
  /** Rebuild only these organizations (D14); the others keep their files. */
  orgs?: readonly string[];
  /** The build instant deciding what is scheduled (D1); defaults to the clock. */
  now?: Date;
  /** Called as post files are rendered or linked (for a progress bar). */
  onProgress?: (done: number, total: number) => void;
  /** Post bodies kept in memory between validation and rendering (UTF-16 units); the rest are read twice. */
  bodyBudget?: number;
  /** Parsed posts' records held in memory as JSON (UTF-16 units); the rest wait in a file beside the state (emit/record-spool.ts). */
  recordsInMemory?: number;
  /**
   * Items a page of a list holds (`/contents/page/{n}`); without it, the live
   * tree's page size, or {@link DEFAULT_PAGE_SIZE} for a first build.
   */
  pageSize?: number;
  /**
   * Look at every file of the live tree instead of trusting the build state,
   * and make the next generation from nothing: repairs a tree changed by hand.
   */
  verify?: boolean;
  /** Also build the preview tree beside `out` (`<out>.preview`): drafts and scheduled posts too. */
  preview?: boolean;
}

function byWhere(a: Problem, b: Problem): number {
  return a.where.localeCompare(b.where, "en", { numeric: true }) || a.message.localeCompare(b.message);
}

// Cached post files are valid only for the code that rendered them: the hash
// of this module's file (the bundle, when bundled) re-renders after an upgrade.
const CODE_VERSION = createHash("sha256")
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .digest("hex");

/** Builds the tree (and the preview tree, with `preview`); throws InvalidSourcesError (with every problem) on bad data. */
export async function build(options: BuildOptions): Promise<BuildReport> {
  const { pageSize } = options;
  if (pageSize !== undefined && !(Number.isInteger(pageSize) && pageSize >= 1 && pageSize <= MAX_PAGE_SIZE)) {
    throw new UsageError(`the page size must be a whole number from 1 to ${MAX_PAGE_SIZE}, not ${pageSize}`);
  }
  const report = await buildTree(options, treeStoreOf(options.out), "public");
  if (!options.preview) return report;
  return { ...report, preview: await buildTree(options, treeStoreOf(previewOutOf(options.out)), "preview") };
}

async function buildTree(options: BuildOptions, store: TreeStore, publication: Publication): Promise<BuildReport> {
  await assertReplaceable(store);
  // Held from before the live generation is read until the swap: what this
  // build compares against is what it replaces.
  const release = await acquireBuildLock(store);
  try {
    const spool = openRecordSpool(store.stateDir, options.recordsInMemory);
    try {
      return await runStages(options, store, publication, spool);
    } finally {
      spool.close();
    }
  } finally {
    await release();
  }
}

interface BuildInput {
  options: BuildOptions;
  store: TreeStore;
  /** Which tree this run of the stages makes: the public one, or the preview one. */
  publication: Publication;
  now: number;
  /** The organizations of an `--org` build, sorted; undefined for all. */
  orgIds: readonly string[] | undefined;
  pageSize: number;
  /** Where the records of the posts read wait until their files and rows are written. */
  spool: RecordSpool;
}

async function runStages(options: BuildOptions, store: TreeStore, publication: Publication, spool: RecordSpool): Promise<BuildReport> {
  const stage = stageTimer();
  const orgIds = options.orgs && options.orgs.length > 0 ? [...new Set(options.orgs)].sort() : undefined;
  const previous = await stage("readPrevious", () => readPreviousBuild(store, { verify: options.verify }));
  // A build not told the page size keeps the live tree's: `serve` and `dev` build with no flag for it.
  const pageSize = options.pageSize ?? previous.state.pageSize ?? DEFAULT_PAGE_SIZE;
  const input: BuildInput = { options, store, publication, now: (options.now ?? new Date()).getTime(), orgIds, pageSize, spool };

  const sources = await stage("loadSources", () => loadValidSources(input, previous));
  const plan = await stage("plan", () => planBuild(input, previous, sources));
  const written = await stage("write", () => write(input, plan));
  const audited = await stage("audit", () => audit(plan, written));
  const orgRows = storedOrgs(previous, plan, written, plannedFileSizes(plan.generation, written));
  const published = await stage("publish", () => publish(input, sources, plan, written, audited, orgRows));
  const reconciled = await stage("reconcile", () => reconcileOrganizationFiles(options.db, store, toReconcile(previous, plan, written, published)));
  return stage("announce", () => announce(input, { previous, sources, plan, written, orgRows, published, reconciled }, stage));
}

type Sources = Awaited<ReturnType<typeof loadValidSources>>;

async function loadValidSources(input: BuildInput, previous: PreviousBuild) {
  const { options } = input;
  // Asked first with the posts (when each has its stored bytes), then without: the first answer holds.
  const parts = new Map<string, { rows: boolean; posts: boolean }>();
  const kept = (rows: OrgRows, content: string | null) => {
    let found = parts.get(rows.id);
    if (!found) parts.set(rows.id, (found = keptPartsOf(previous, { codeVersion: CODE_VERSION, pageSize: input.pageSize }, input.now, rows, content)));
    return found;
  };
  const sources = await loadSources(
    {
      db: options.db,
      content: options.content,
      orgs: input.orgIds,
      previous: {
        ...previousPosts(previous, CODE_VERSION),
        kept,
        needsRecord: needsRecordAt(input.now, input.publication),
        inPlace: editedInPlaceAt(previous, { codeVersion: CODE_VERSION, pageSize: input.pageSize }, input.now, input.publication),
      },
      bodyBudget: options.bodyBudget,
      spool: input.spool,
    },
    (db) => {
      const secrets = readSecrets(db);
      // Started now: the key derivation runs on the thread pool while the posts are read.
      return { secrets, key: secretsKeyFor(secrets, previous.state.audited) };
    },
  );
  if (sources.problems.length > 0 || sources.posts === null) {
    // A problem may quote the line it refuses, and the line may hold a secret's value.
    throw new InvalidSourcesError(redactSecrets(sources.problems, needlesOf(sources.extra.secrets).needles).sort(byWhere));
  }
  return {
    snapshot: sources.snapshot,
    rowsKept: sources.rowsKept,
    rows: sources.rows,
    posts: sources.posts,
    secrets: sources.extra.secrets,
    secretsKey: sources.extra.key,
    warnings: sources.warnings,
  };
}

type BuildPlan = ReturnType<typeof planBuild>;

/**
 * Plans the organizations that may have changed; one kept whole (its rows
 * and posts as the last build left them) stays as it is, like every
 * organization an `--org` build does not name. Of one planned, a part kept
 * is not rendered: its files, figures and audit expectations are the last build's.
 */
function planBuild(input: BuildInput, previous: PreviousBuild, sources: Sources) {
  const { snapshot, posts, secrets, rowsKept } = sources;
  const { state } = previous;
  const planned = snapshot.orgs;
  // Posts edited in place keep their part as it is but for their own files.
  const partsOf = (orgId: string) => ({ rows: rowsKept.has(orgId), posts: posts.kept.has(orgId) || posts.inPlace.has(orgId) });
  const orgPlans = planned.map((org) => {
    const parts = partsOf(org.id);
    const stored = state.orgs.get(org.id);
    const kept = (parts.rows || parts.posts) && stored ? { ...parts, counts: stored.counts, nextPublishAt: stored.nextPublishAt } : undefined;
    return planOrg(org, posts.byOrg.get(org.id) ?? [], input.now, { kept, pageSize: input.pageSize, publication: input.publication });
  });
  const keep = (orgId: string) => input.orgIds !== undefined || (posts.kept.has(orgId) && rowsKept.has(orgId));
  const generation = planGeneration(previous, orgPlans, { keep, codeVersion: CODE_VERSION, pageSize: input.pageSize });
  const keptExpectation = (orgId: string) => {
    const parts = partsOf(orgId);
    if (!parts.rows && !parts.posts) return {};
    const recorded = state.expectedOf(orgId)!;
    return { ...(parts.rows ? { blocks: recorded.blocks } : {}), ...(parts.posts ? { posts: recorded.posts } : {}) };
  };
  const buildAudit = createBuildAudit(
    { orgs: planned, rowIds: snapshot.rowIds, kept: keptExpectation },
    posts.byOrg,
    secrets,
    input.now,
    state.audited,
    sources.secretsKey,
    input.publication,
  );
  const rowsOf = new Map(sources.rows.orgs.map((rows) => [rows.id, rows]));
  const digests = new Map(
    planned.map((org) => {
      const rows = rowsOf.get(org.id)!;
      const { content } = posts.listings.get(org.id)!;
      return [org.id, { rowsDigest: rowsDigestOf(CODE_VERSION, rows), postsDigest: postsDigestOf(CODE_VERSION, input.pageSize, rows, content) }];
    }),
  );
  return { orgPlans, generation, audit: buildAudit, digests };
}

/** What the state keeps of each planned organization, for a later build that keeps it or a part of it. */
function storedOrgs(previous: PreviousBuild, plan: BuildPlan, written: WriteResult, sizes: readonly TreeFileSize[]): Map<string, StoredOrg> {
  const oversize = new Map<string, TreeFileSize[]>();
  for (const size of sizes) {
    if (size.bytes <= EDGE_FILE_LIMIT) continue;
    const orgId = orgInFolder(size.rel);
    const list = oversize.get(orgId);
    if (list) list.push(size);
    else oversize.set(orgId, [size]);
  }
  const rows = new Map<string, StoredOrg>();
  for (const orgPlan of plan.orgPlans) {
    const { orgId, kept } = orgPlan;
    const stats = written.perOrg.get(orgId) ?? { written: 0, unchanged: 0, removed: 0 };
    // Of a kept part, but the files of posts edited in place: those were measured again.
    const edited = new Set(orgPlan.posts.map((post) => post.file));
    const keptOversize = kept.rows || kept.posts ? (previous.state.orgs.get(orgId)?.oversize ?? []).filter((o) => kept[partOfFile(o.rel)] && !(o.post !== undefined && edited.has(o.post))) : [];
    rows.set(orgId, {
      ...plan.digests.get(orgId)!,
      code: CODE_VERSION,
      counts: orgPlan.counts,
      files: stats.written + stats.unchanged,
      nextPublishAt: orgPlan.nextPublishAt,
      oversize: [...(oversize.get(orgId) ?? []), ...keptOversize],
    });
  }
  return rows;
}

async function write(input: BuildInput, plan: BuildPlan): Promise<WriteResult> {
  const { options } = input;
  const { live } = plan.generation.previous;
  // A secret added since the live tree's audit may be a value its unchanged
  // files already hold: then even a build that changes no byte is audited and published.
  const force = live !== null && (await plan.audit.secretsChanged());
  return writeGeneration(input.store, plan.generation, {
    loadBody: (post) => loadBody(options.content, post),
    contentDir: options.content,
    inspection: plan.audit.inspection,
    onProgress: options.onProgress,
    force,
  });
}

/** A tree that fails the audit is never swapped in: the build fails, the previous tree stays. */
async function audit(plan: BuildPlan, written: WriteResult): Promise<AuditState | null> {
  if (written.kind === "unchanged") return null;
  const { previous } = plan.generation;
  const { gen, inspected, replay } = written;
  const files = generationFiles(written.files);
  return plan.audit.check(gen.tree, recordedAudit(previous, files), files, inspected, replay, plan.generation.keptOrgs).catch(async (error: unknown) => {
    await discardGeneration(gen);
    throw error;
  });
}

async function publish(
  input: BuildInput,
  sources: Sources,
  plan: BuildPlan,
  written: WriteResult,
  audited: AuditState | null,
  orgs: Map<string, StoredOrg>,
): Promise<boolean> {
  const kept = { records: sources.posts.byOrg, orgs, listings: sources.posts.listings, refreshed: sources.posts.refreshed, expected: plan.audit.expected };
  if (written.kind === "unchanged" || audited === null) {
    keepLive(input.store, plan.generation, kept);
    return false;
  }
  await publishGeneration(input.store, plan.generation, written, kept, audited);
  return true;
}

interface Built {
  previous: PreviousBuild;
  sources: Sources;
  plan: BuildPlan;
  written: WriteResult;
  /** What the state keeps of each planned organization: its figures and oversize files among them. */
  orgRows: ReadonlyMap<string, StoredOrg>;
  published: boolean;
  reconciled: string[];
}

async function announce(input: BuildInput, built: Built, stage: StageTimer): Promise<BuildReport> {
  const { previous, sources, plan, written, orgRows, published, reconciled } = built;
  const changes: ChangedPaths = written.kind === "written" && published ? changedPathsOf(written) : { added: [], changed: [], removed: [] };
  for (const apiPath of reconciled) if (!changes.changed.includes(apiPath)) changes.changed.push(apiPath);
  // Beside the tree, for the edge: keys may have changed even when no file did. The preview tree never reaches the edge.
  if (input.publication === "public") writeEdgeDocumentOf(input.options.db, input.store.out);
  const liveTree = previous.live?.tree ?? null;
  // Read while the lock is held: the tree this build replaced is pruned by the next one.
  const changedTagList = await changedTags(
    changes,
    { before: published ? liveTree : null, after: written.kind === "written" && published ? written.gen.tree : liveTree },
    bySlugIds(plan.orgPlans),
  );

  const planned = new Map(plan.orgPlans.map((orgPlan) => [orgPlan.orgId, orgPlan]));
  const orgs: OrgReport[] = sources.rows.orgs.map(({ id: orgId }) => {
    const orgPlan = planned.get(orgId);
    if (orgPlan === undefined) {
      const kept = previous.state.orgs.get(orgId)!;
      return { orgId, ...kept.counts, filesWritten: 0, filesUnchanged: kept.files, filesRemoved: 0, nextPublishAt: kept.nextPublishAt };
    }
    const stats = written.perOrg.get(orgId) ?? { written: 0, unchanged: 0, removed: 0 };
    return {
      orgId,
      ...orgPlan.counts,
      filesWritten: stats.written,
      filesUnchanged: stats.unchanged,
      filesRemoved: stats.removed,
      nextPublishAt: orgPlan.nextPublishAt,
    };
  });
  const next = orgs.map((o) => o.nextPublishAt).filter((v): v is string => v !== null).sort()[0] ?? null;
  const oversize = sources.rows.orgs.flatMap(({ id }) => (orgRows.get(id) ?? previous.state.orgs.get(id)!).oversize);
  const warnings = [...sources.warnings, ...treeFileWarnings(oversize, postsWarned(sources.warnings))];
  const { posts } = sources;
  return {
    out: input.store.out,
    generation: written.kind === "written" && published ? written.gen.id : (previous.live?.id ?? null),
    changed: published,
    durationMs: stage.total(),
    phasesMs: stage.all(),
    postsParsed: posts.parsed,
    postsReused: posts.reused,
    parseThreads: posts.threads,
    postsRendered: written.postsRendered,
    nextPublishAt: next,
    changedPaths: changes,
    changedTags: changedTagList,
    orgs,
    warnings: warnings.sort(byWhere),
  };
}

/**
 * The size of every file this build planned and rendered, written now or kept
 * from the live tree; of an unchanged post's files, those the live build found
 * over the edge's limit (the others are not looked up).
 */
function plannedFileSizes(plan: GenerationPlan, written: WriteResult): TreeFileSize[] {
  const placed = written.kind === "written" ? written.files.placed : new Map<string, FileEntry>();
  const sizeOf = (rel: string) => placed.get(rel)?.[3] ?? plan.liveEntry(rel)?.[3] ?? 0;
  const { state } = plan.previous;
  const oversize = plan.postsPlanned.flatMap(({ orgId }) => state.orgs.get(orgId)?.oversize ?? []);
  const reused = new Set(plan.jobs.flatMap((job) => (job.reuse ? [job.post.file] : [])));
  return [
    ...plan.outputs.map((output) => ({ rel: output.rel, bytes: output.size })),
    ...plan.jobs.flatMap((job) => (job.reuse ? [] : job.rels.map((rel) => ({ rel, bytes: sizeOf(rel), post: job.post.file })))),
    ...oversize.filter((o) => o.post !== undefined && reused.has(o.post)),
  ];
}

/**
 * The id behind each by-slug answer the build just planned, so the changed
 * tags need no file read back: block files carry their JSON, and a published
 * post's slug and id are its front matter's.
 */
function bySlugIds(orgPlans: readonly OrgPlan[]): (apiPath: string) => string | undefined {
  const ids = new Map<string, string>();
  for (const plan of orgPlans) {
    for (const file of plan.files) {
      if (ROUTES[file.route.kind].role === "bySlug" && "json" in file) ids.set(pathOf(file.route), (file.json as { id: string }).id);
    }
  }
  // A post's by its slug, on the first question about one: few paths are asked about, of many posts.
  let postIds: Map<string, Map<string, string>> | undefined;
  const postBySlug = kindOf("post", "bySlug");
  return (apiPath) => {
    const route = parseApiPath(apiPath);
    if (route?.kind !== postBySlug || !("slug" in route)) return ids.get(apiPath);
    postIds ??= new Map(orgPlans.map((plan) => [plan.orgId, new Map(plan.posts.map((post) => [post.meta.slug, post.meta.id]))]));
    return postIds.get(route.orgId)?.get(route.slug);
  };
}

/**
 * The organizations whose file may be older than their row once the build is
 * done: those it planned (rendered from its snapshot), and those it kept whose
 * file the write proxy replaced in the live tree after it was linked into the
 * new one (a new inode there).
 */
function toReconcile(previous: PreviousBuild, plan: BuildPlan, written: WriteResult, published: boolean): string[] {
  const planned = plan.orgPlans.map((p) => p.orgId);
  const { live } = previous;
  if (!published || written.kind !== "written" || live === null) return planned;
  const inode = (tree: string, rel: string) => lstatSync(path.join(tree, rel), { throwIfNoEntry: false })?.ino;
  const replaced = [...previous.state.pages.keys()].filter((orgId) => {
    if (!plan.generation.keeps(orgId)) return false;
    const rel = proxyFileOf(orgId);
    const before = inode(live.tree, rel);
    return before === undefined || before !== inode(written.gen.tree, rel);
  });
  return [...planned, ...replaced];
}

type StageTimer = ReturnType<typeof stageTimer>;

/** Runs each stage under its name and keeps its wall time for the report. */
function stageTimer() {
  const started = performance.now();
  const times: Record<string, number> = {};
  const run = async <T>(name: string, stage: () => T | Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await stage();
    } finally {
      times[name] = Math.round(performance.now() - start);
    }
  };
  return Object.assign(run, {
    all: () => ({ ...times }),
    total: () => Math.round(performance.now() - started),
  });
}
