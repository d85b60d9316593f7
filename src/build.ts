/**
 * `cdsnap build`: read and validate every source, render, emit, report.
 * Reading happens before anything is written: bad data fails the build with
 * every problem listed and leaves the published tree untouched (D9).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseApiPath, pathOf } from "./api-paths.js";
import { readSecrets } from "./audit/read-secrets.js";
import { createBuildAudit } from "./audit/run-audit.js";
import { needlesOf, redactSecrets } from "./audit/scan-secrets.js";
import { writeEdgeDocumentOf } from "./edge/publish-document.js";
import { planGeneration, previousRecords, readPreviousBuild, type GenerationPlan } from "./emit/plan-generation.js";
import { publishGeneration } from "./emit/publish-generation.js";
import { reconcileOrganizationFiles } from "./emit/reconcile.js";
import { acquireBuildLock, assertReplaceable, treeStoreOf, type TreeStore } from "./emit/tree-store.js";
import { discardGeneration, statsOfUnchanged, writeGeneration, type WrittenGeneration } from "./emit/write-generation.js";
import { InvalidSourcesError, type Problem } from "./errors.js";
import { postsWarned, treeFileWarnings, type TreeFileSize } from "./model/edge-file-limit.js";
import { changedTags } from "./on-change/change-set.js";
import { planOrg, type OrgPlan } from "./render/render-org.js";
import type { BuildReport, OrgReport } from "./report.js";
import { itemRoute, kindOf, ROUTES } from "./route-table.js";
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
}

function byWhere(a: Problem, b: Problem): number {
  return a.where.localeCompare(b.where, "en", { numeric: true }) || a.message.localeCompare(b.message);
}

// Cached post files are valid only for the code that rendered them: the hash
// of this module's file (the bundle, when bundled) re-renders after an upgrade.
const CODE_VERSION = createHash("sha256")
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .digest("hex");

/** Builds the tree; throws InvalidSourcesError (with every problem) on bad data. */
export async function build(options: BuildOptions): Promise<BuildReport> {
  const store = treeStoreOf(options.out);
  await assertReplaceable(store);
  // Held from before the live generation is read until the swap: what this
  // build compares against is what it replaces.
  const release = await acquireBuildLock(store);
  try {
    return await buildLocked(options, store);
  } finally {
    await release();
  }
}

async function buildLocked(options: BuildOptions, store: TreeStore): Promise<BuildReport> {
  const phases = createPhaseTimer();
  const now = (options.now ?? new Date()).getTime();
  const orgIds = options.orgs && options.orgs.length > 0 ? [...new Set(options.orgs)].sort() : undefined;

  const previous = await readPreviousBuild(store);
  phases.end("previous build");

  const sources = await loadSources(
    { db: options.db, content: options.content, orgs: orgIds, previous: previousRecords(previous), bodyBudget: options.bodyBudget },
    readSecrets,
  );
  if (sources.problems.length > 0) {
    // A problem may quote the line it refuses, and the line may hold a secret's value.
    throw new InvalidSourcesError(redactSecrets(sources.problems, needlesOf(sources.extra).needles).sort(byWhere));
  }
  const { snapshot, extra: secrets } = sources;
  const posts = sources.posts!;
  phases.end("sources");

  const audit = createBuildAudit(snapshot, posts.byOrg, secrets, now, previous.state.audited);
  const orgPlans = snapshot.orgs.map((org) => planOrg(org, posts.byOrg.get(org.id) ?? [], now));
  const plan = planGeneration(previous, orgPlans, { carryOver: orgIds !== undefined, codeVersion: CODE_VERSION });
  phases.end("plan");

  // A secret added since the live tree's audit may be a value its unchanged
  // files already hold: then even a build that changes no byte is audited.
  const reaudit = () => (previous.live === null ? Promise.resolve(false) : audit.secretsChanged());
  const noOp = plan.noOp && !(await reaudit());
  if (plan.noOp) phases.end("audit");
  let written: WrittenGeneration | null = null;
  let published = false;
  if (!noOp) {
    written = await writeGeneration(store, plan, {
      loadBody: (post) => loadBody(options.content, post),
      onWrite: audit.onWrite,
      onProgress: options.onProgress,
    });
    phases.end("render and write");
    // Sources were touched but every byte came out the same: the live tree
    // stays, and the unused generation is left for the next build to recycle;
    // unless a secret changed, and the same bytes are audited and swapped in.
    if (!written.same || (await reaudit())) {
      // A tree that fails the audit is never swapped in: the build fails, the previous tree stays.
      const { gen, files } = written;
      const audited = await audit.check(gen.tree, previous.state.audit?.() ?? null, files).catch(async (error: unknown) => {
        await discardGeneration(gen);
        throw error;
      });
      phases.end("audit");
      await publishGeneration(store, plan, written, posts.byOrg, audited);
      phases.end("state, swap and prune");
      published = true;
    }
  }

  const perOrg = written?.perOrg ?? statsOfUnchanged(plan);
  const changes = published ? written!.changes : { added: [], changed: [], removed: [] };
  const reconciled = await reconcileOrganizationFiles(options.db, store, orgPlans.map((p) => p.orgId));
  for (const apiPath of reconciled) if (!changes.changed.includes(apiPath)) changes.changed.push(apiPath);
  phases.end("reconcile");
  // Beside the tree, for the edge: keys may have changed even when no file did.
  writeEdgeDocumentOf(options.db, store.out);
  phases.end("edge document");
  // Read while the lock is held: the tree this build replaced is pruned by the next one.
  const changedTagList = await changedTags(
    changes,
    { before: published ? (previous.live?.tree ?? null) : null, after: published ? written!.gen.tree : (previous.live?.tree ?? null) },
    bySlugIds(orgPlans),
  );

  const orgs: OrgReport[] = orgPlans.map((orgPlan) => {
    const stats = perOrg.get(orgPlan.orgId) ?? { written: 0, unchanged: 0, removed: 0 };
    return {
      orgId: orgPlan.orgId,
      ...orgPlan.counts,
      filesWritten: stats.written,
      filesUnchanged: stats.unchanged,
      filesRemoved: stats.removed,
      nextPublishAt: orgPlan.nextPublishAt,
    };
  });
  const next = orgs.map((o) => o.nextPublishAt).filter((v): v is string => v !== null).sort()[0] ?? null;
  const warnings = [...sources.warnings, ...treeFileWarnings(plannedFileSizes(plan, written), postsWarned(sources.warnings))];
  return {
    out: store.out,
    generation: published ? written!.gen.id : (previous.live?.id ?? null),
    changed: published,
    durationMs: phases.total(),
    phasesMs: phases.all(),
    postsParsed: posts.parsed,
    postsReused: posts.reused,
    parseThreads: posts.threads,
    postsRendered: written?.postsRendered ?? 0,
    nextPublishAt: next,
    changedPaths: changes,
    changedTags: changedTagList,
    orgs,
    warnings: warnings.sort(byWhere),
  };
}

/** The size of every file of this build's organizations, written now or kept from the live tree. */
function plannedFileSizes(plan: GenerationPlan, written: WrittenGeneration | null): TreeFileSize[] {
  const sizeOf = (rel: string) => written?.files.get(rel)?.[3] ?? plan.liveEntry(rel)?.[3] ?? 0;
  return [
    ...plan.outputs.map((output) => ({ rel: output.rel, bytes: output.bytes.length })),
    ...plan.jobs.flatMap((job) => job.rels.map((rel) => ({ rel, bytes: sizeOf(rel), post: job.post.file }))),
  ];
}

/**
 * The id behind each by-slug answer the build just planned, so the changed
 * tags need no file read back: block files carry their JSON, and a published
 * post's slug and id are its front matter's.
 */
function bySlugIds(orgPlans: readonly OrgPlan[]): (apiPath: string) => string | undefined {
  const ids = new Map<string, string>();
  const postBySlug = kindOf("post", "bySlug");
  for (const plan of orgPlans) {
    for (const file of plan.files) {
      const route = parseApiPath(file.path);
      if (route && ROUTES[route.kind].role === "bySlug") ids.set(file.path, (file.json as { id: string }).id);
    }
    for (const post of plan.posts) ids.set(pathOf(itemRoute(postBySlug, plan.orgId, post.meta)), post.meta.id);
  }
  return (apiPath) => ids.get(apiPath);
}

function createPhaseTimer() {
  const started = performance.now();
  let last = started;
  const phases: Record<string, number> = {};
  return {
    end(name: string) {
      const now = performance.now();
      phases[name] = Math.round((phases[name] ?? 0) + now - last);
      last = now;
    },
    all: () => ({ ...phases }),
    total: () => Math.round(performance.now() - started),
  };
}
