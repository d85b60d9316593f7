/**
 * `cdsnap build`: read and validate every source, render, emit, report.
 * Reading happens before anything is written: bad data fails the build with
 * every problem listed and leaves the published tree untouched (D9).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { readSecrets } from "./audit/read-secrets.js";
import { createBuildAudit } from "./audit/run-audit.js";
import { reconcileOrganizationFiles } from "./emit/reconcile.js";
import { emitTree, loadPrevious, previousRecords } from "./emit/emit-tree.js";
import { acquireBuildLock, assertReplaceable, treeStoreOf, type TreeStore } from "./emit/tree-store.js";
import { InvalidSourcesError, type Problem } from "./errors.js";
import { planOrg, type OrgPlan } from "./render/render-org.js";
import type { BuildReport, OrgReport } from "./report.js";
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

  const previous = await loadPrevious(store);
  phases.end("previous build");
  const sources = await loadSources(
    { db: options.db, content: options.content, orgs: orgIds, previous: previousRecords(previous), bodyBudget: options.bodyBudget },
    readSecrets,
  );
  phases.end("sources");
  const { snapshot, extra: secrets } = sources;
  const posts = sources.posts!;
  if (sources.problems.length > 0) throw new InvalidSourcesError(sources.problems.sort(byWhere));

  const plans: OrgPlan[] = snapshot.orgs.map((org) => planOrg(org, posts.byOrg.get(org.id) ?? [], now));
  phases.end("plan");

  const audit = createBuildAudit(snapshot, posts.byOrg, secrets, now);
  const emitted = await emitTree(store, plans, {
    carryOver: orgIds !== undefined,
    previous,
    records: posts.byOrg,
    codeVersion: CODE_VERSION,
    loadBody: (post) => loadBody(options.content, post),
    onProgress: options.onProgress,
    onWrite: audit.onWrite,
    // A tree that fails the audit is never swapped in: the build fails, the previous tree stays.
    beforeSwap: async (gen, context) => {
      phases.end("render and write");
      await audit.check(gen, context);
      phases.end("audit");
    },
  });
  // After the audit come the swap and the removal of the generation before last (as many unlinks as it had files).
  phases.end(emitted.swapped ? "swap and prune" : "render and write");
  const reconciled = await reconcileOrganizationFiles(options.db, store, plans.map((p) => p.orgId));
  for (const apiPath of reconciled) if (!emitted.changes.changed.includes(apiPath)) emitted.changes.changed.push(apiPath);
  phases.end("reconcile");

  const orgs: OrgReport[] = plans.map((plan) => {
    const stats = emitted.perOrg.get(plan.orgId) ?? { written: 0, unchanged: 0, removed: 0 };
    return {
      orgId: plan.orgId,
      ...plan.counts,
      filesWritten: stats.written,
      filesUnchanged: stats.unchanged,
      filesRemoved: stats.removed,
      nextPublishAt: plan.nextPublishAt,
    };
  });
  const next = orgs.map((o) => o.nextPublishAt).filter((v): v is string => v !== null).sort()[0] ?? null;
  return {
    out: store.out,
    generation: emitted.generation,
    changed: emitted.swapped,
    durationMs: phases.total(),
    phasesMs: phases.all(),
    postsParsed: posts.parsed,
    postsReused: posts.reused,
    parseThreads: posts.threads,
    postsRendered: emitted.postsRendered,
    nextPublishAt: next,
    changedPaths: emitted.changes,
    orgs,
  };
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
