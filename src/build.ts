/**
 * `cdsnap build`: read and validate every source, render, emit, report.
 * Reading happens before anything is written: bad data fails the build with
 * every problem listed and leaves the published tree untouched (D9).
 */
import { performance } from "node:perf_hooks";
import { readSecrets } from "./audit/read-secrets.js";
import { auditBeforeSwap } from "./audit/run-audit.js";
import { assertMigrated, openDatabase } from "./db/open.js";
import { readSnapshot } from "./db/read-snapshot.js";
import { reconcileOrganizationFiles } from "./emit/reconcile.js";
import { emitTree } from "./emit/emit-tree.js";
import { acquireBuildLock, assertReplaceable, treeStoreOf } from "./emit/tree-store.js";
import { InvalidSourcesError, type Problem } from "./errors.js";
import { renderOrg, type RenderedOrg } from "./render/render-org.js";
import type { BuildReport, OrgReport } from "./report.js";
import { crossCheck } from "./sources/cross-check.js";
import { readPosts } from "./sources/read-posts.js";

export interface BuildOptions {
  db: string;
  content: string;
  out: string;
  /** Rebuild only these organizations (D14); the others keep their files. */
  orgs?: readonly string[];
  /** The build instant deciding what is scheduled (D1); defaults to the clock. */
  now?: Date;
}

function byWhere(a: Problem, b: Problem): number {
  return a.where.localeCompare(b.where, "en", { numeric: true }) || a.message.localeCompare(b.message);
}

/** Builds the tree; throws InvalidSourcesError (with every problem) on bad data. */
export async function build(options: BuildOptions): Promise<BuildReport> {
  const started = performance.now();
  const now = (options.now ?? new Date()).getTime();
  const store = treeStoreOf(options.out);
  await assertReplaceable(store);
  const orgIds = options.orgs && options.orgs.length > 0 ? [...new Set(options.orgs)].sort() : undefined;

  const db = openDatabase(options.db, { readonly: true });
  let snapshot;
  let secrets;
  try {
    assertMigrated(db, options.db);
    snapshot = readSnapshot(db, orgIds);
    secrets = readSecrets(db);
  } finally {
    db.close();
  }
  const problems: Problem[] = [...snapshot.problems];
  for (const id of snapshot.missing) {
    problems.push({ where: `--org ${id}`, message: "no organization has this id" });
  }

  const posts = await readPosts(options.content, orgIds);
  problems.push(...posts.problems);
  for (const folder of posts.byOrg.keys()) {
    if (!snapshot.rowIds.has(folder) && orgIds === undefined) {
      problems.push({ where: `${folder}/`, message: `no organization has the id "${folder}"; posts live in <content>/<orgId>/` });
    }
  }
  for (const org of snapshot.orgs) problems.push(...crossCheck(org, posts.byOrg.get(org.id) ?? []));
  if (problems.length > 0) throw new InvalidSourcesError(problems.sort(byWhere));

  const timings = new Map<string, number>();
  const rendered: RenderedOrg[] = snapshot.orgs.map((org) => {
    const t = performance.now();
    const result = renderOrg(org, posts.byOrg.get(org.id) ?? [], now);
    timings.set(org.id, performance.now() - t);
    return result;
  });

  const release = await acquireBuildLock(store);
  let emitted;
  try {
    emitted = await emitTree(store, rendered, {
      carryOver: orgIds !== undefined,
      // A tree that fails the audit is never swapped in: the build fails, the previous tree stays.
      beforeSwap: auditBeforeSwap(snapshot, posts.byOrg, secrets, now),
    });
  } finally {
    await release();
  }
  await reconcileOrganizationFiles(options.db, store, rendered.map((r) => r.orgId));

  const orgs: OrgReport[] = rendered.map((r) => {
    const stats = emitted.perOrg.get(r.orgId) ?? { written: 0, unchanged: 0, removed: 0 };
    return {
      orgId: r.orgId,
      ...r.counts,
      filesWritten: stats.written,
      filesUnchanged: stats.unchanged,
      filesRemoved: stats.removed,
      renderMs: Math.round(timings.get(r.orgId) ?? 0),
      nextPublishAt: r.nextPublishAt,
    };
  });
  const next = orgs.map((o) => o.nextPublishAt).filter((v): v is string => v !== null).sort()[0] ?? null;
  return {
    out: store.out,
    generation: emitted.generation,
    changed: emitted.swapped,
    durationMs: Math.round(performance.now() - started),
    nextPublishAt: next,
    orgs,
  };
}
