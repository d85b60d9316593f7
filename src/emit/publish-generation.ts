/**
 * Makes a written and audited generation the live one: swaps `--out` to it in
 * one rename inside the transaction that records its state for the next build,
 * and removes generations older than the one it replaced.
 */
import type { PostRecord } from "../model/snapshot.js";
import { emptyState, postsOf, writeState, type AuditState, type NextState } from "./build-state.js";
import { sha256 } from "./file-bytes.js";
import type { GenerationPlan } from "./plan-generation.js";
import { pruneGenerations, swapTo, type TreeStore } from "./tree-store.js";
import { discardGeneration, type WrittenGeneration } from "./write-generation.js";

/** The state of the next generation: its files, memberships, every post record of the planned organizations, the audit's facts. */
function nextState(
  plan: GenerationPlan,
  written: WrittenGeneration,
  records: ReadonlyMap<string, readonly PostRecord[]>,
  audit: AuditState,
): NextState {
  const { state } = plan.previous;
  const next: NextState = { ...emptyState(), files: written.files, audit };
  for (const [orgId, json] of plan.pages) next.pages.set(orgId, sha256(json));
  for (const [orgId, hash] of state.pages) if (plan.keeps(orgId)) next.pages.set(orgId, hash);
  const keyOf = new Map(plan.jobs.map((job) => [job.post.file, job.key]));
  for (const [orgId, list] of records) {
    if (!plan.pages.has(orgId)) continue;
    const byFile = postsOf(next, orgId);
    for (const { body: _body, ...record } of list) byFile.set(record.file, { ...record, key: keyOf.get(record.file) ?? "" });
  }
  for (const [orgId, byFile] of state.posts) if (plan.keeps(orgId)) next.posts.set(orgId, byFile);
  return next;
}

/**
 * Publishes `written`. `records` holds every post record (all states) of each
 * planned organization, kept for the next build to reuse.
 */
export async function publishGeneration(
  store: TreeStore,
  plan: GenerationPlan,
  written: WrittenGeneration,
  records: ReadonlyMap<string, readonly PostRecord[]>,
  audit: AuditState,
): Promise<void> {
  const { live, state } = plan.previous;
  try {
    await writeState(store, written.gen.id, nextState(plan, written, records, audit), state, () => swapTo(store, written.gen));
  } catch (error) {
    await discardGeneration(written.gen);
    throw error;
  }
  await pruneGenerations(store, live ? [written.gen.id, live.id] : [written.gen.id]);
}
