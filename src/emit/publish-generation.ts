/**
 * Makes a written and audited generation the live one: swaps `--out` to it in
 * one rename inside the transaction that records its state for the next build,
 * and removes generations older than the one it replaced.
 */
import type { PostRecord } from "../model/snapshot.js";
import { emptyState, postsOf, refreshPosts, writeState, type AuditState, type NextState } from "./build-state.js";
import { sha256 } from "./file-bytes.js";
import type { GenerationPlan } from "./plan-generation.js";
import { pruneGenerations, swapTo, type TreeStore } from "./tree-store.js";
import { discardGeneration, type WrittenGeneration } from "./write-generation.js";

/** Every post record of the planned organizations, with the key its files were rendered from, and those of the organizations kept. */
function nextPosts(plan: GenerationPlan, records: ReadonlyMap<string, readonly PostRecord[]>): NextState["posts"] {
  const { state } = plan.previous;
  const posts: NextState["posts"] = new Map();
  const jobOf = new Map(plan.jobs.map((job) => [job.post.file, job]));
  for (const [orgId, list] of records) {
    if (!plan.pages.has(orgId)) continue;
    const byFile = postsOf({ posts }, orgId);
    for (const { body: _body, ...record } of list) {
      const job = jobOf.get(record.file);
      byFile.set(record.file, job ? { ...record, key: job.key, summary: job.plan.summaries.get(record.file) } : { ...record, key: "" });
    }
  }
  for (const [orgId, byFile] of state.posts) if (plan.keeps(orgId)) posts.set(orgId, byFile);
  return posts;
}

/** The state of the next generation: its files, memberships, every post record of the planned organizations, the audit's facts. */
function nextState(
  plan: GenerationPlan,
  written: WrittenGeneration,
  records: ReadonlyMap<string, readonly PostRecord[]>,
  audit: AuditState,
): NextState {
  const { state, live, trusted } = plan.previous;
  // The live generation is the next one's base only when this one was made as
  // its copy plus the changes recorded: then the next build can replay them.
  const base = trusted && live ? live.id : null;
  const next: NextState = {
    ...emptyState(),
    base,
    changes: written.replay,
    code: plan.codeVersion,
    files: written.files,
    audit,
    posts: nextPosts(plan, records),
  };
  for (const [orgId, json] of plan.pages) next.pages.set(orgId, sha256(json));
  for (const [orgId, hash] of state.pages) if (plan.keeps(orgId)) next.pages.set(orgId, hash);
  return next;
}

/**
 * A build that changed no byte keeps the live generation; the records of
 * posts read again (same bytes, new file identity) are kept for the next build.
 */
export function keepLive(store: TreeStore, plan: GenerationPlan, records: ReadonlyMap<string, readonly PostRecord[]>): void {
  const { trusted, state } = plan.previous;
  if (trusted && (state.code !== plan.codeVersion || readAgain(plan, records))) {
    refreshPosts(store, state, nextPosts(plan, records), plan.codeVersion);
  }
}

/** Whether any post was read from its file again, or is gone: else the stored records stand as they are. */
function readAgain(plan: GenerationPlan, records: ReadonlyMap<string, readonly PostRecord[]>): boolean {
  const { state } = plan.previous;
  for (const [orgId, list] of records) {
    const stored = state.posts.get(orgId);
    if ((stored?.size ?? 0) !== list.length) return true;
    for (const record of list) {
      const known = stored!.get(record.file);
      if (known?.fingerprint !== record.fingerprint || known.sha256 !== record.sha256) return true;
    }
  }
  return false;
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
