/**
 * Makes a written and audited generation the live one: swaps `--out` to it in
 * one rename inside the transaction that records its state for the next build,
 * and removes generations older than the one it replaced.
 */
import type { OrgExpectation } from "../audit/audit-inputs.js";
import { isUnchanged, type FreshPost, type Post } from "../model/snapshot.js";
import { builtKeyOf, type OrgPlan } from "../render/render-org.js";
import { refreshState, sameListing, writeState, type AuditState, type BuiltPost, type NextState, type StoredOrg } from "./build-state.js";
import type { PostsListing } from "../sources/posts-listing.js";
import { sha256 } from "./file-bytes.js";
import type { GenerationPlan } from "./plan-generation.js";
import { pruneGenerations, swapTo, type TreeStore } from "./tree-store.js";
import { discardGeneration, type WrittenGeneration } from "./write-generation.js";

/** What a build keeps of its sources for the next one. */
export interface KeptSources {
  /** Every post (all states) of each planned organization. */
  records: ReadonlyMap<string, readonly Post[]>;
  /** Each planned organization's digest and figures. */
  orgs: Map<string, StoredOrg>;
  /** Each organization's posts as read, kept organizations too. */
  listings: ReadonlyMap<string, PostsListing>;
  /** Posts of unchanged organizations copied anew with the same bytes, and their new fingerprint. */
  refreshed: [file: string, fingerprint: string][];
  /** What the sources publish of each planned organization (the audit's expectations). */
  expected: ReadonlyMap<string, OrgExpectation>;
}

/**
 * Every post of the organizations whose posts were planned: one parsed or read
 * whole with the category it was rendered with and its list item (when
 * published), an unchanged one as null (its rows stand). And apart, the posts
 * edited in place of the organizations whose posts part was kept.
 */
function nextPosts(plan: GenerationPlan, records: ReadonlyMap<string, readonly Post[]>): Pick<NextState, "posts" | "edited"> {
  const built = ({ categories, summaries, shows }: OrgPlan, post: FreshPost): BuiltPost => ({
    post,
    built: { category: builtKeyOf(post, categories, shows(post)), summary: summaries.get(post.file) ?? null },
  });
  const posts: NextState["posts"] = new Map();
  for (const orgPlan of plan.postsPlanned) {
    const byFile = new Map<string, BuiltPost | null>();
    posts.set(orgPlan.orgId, byFile);
    for (const post of records.get(orgPlan.orgId) ?? []) byFile.set(post.file, isUnchanged(post) ? null : built(orgPlan, post));
  }
  const edited: NextState["edited"] = new Map();
  for (const orgPlan of plan.postsKept) {
    const inPlace = (records.get(orgPlan.orgId) ?? []).filter((post): post is FreshPost => !isUnchanged(post));
    if (inPlace.length > 0) edited.set(orgPlan.orgId, new Map(inPlace.map((post) => [post.file, built(orgPlan, post)])));
  }
  return { posts, edited };
}

/** Organizations of the live generation neither planned nor kept: gone from the database. */
function droppedOrgs(plan: GenerationPlan): string[] {
  const { state } = plan.previous;
  const known = new Set([...state.pages.keys(), ...state.orgs.keys()]);
  return [...known].filter((orgId) => !plan.pages.has(orgId) && !plan.keepsPages(orgId));
}

/** The state of the next generation: its files, memberships, the planned organizations' rows, the audit's facts. */
function nextState(plan: GenerationPlan, written: WrittenGeneration, kept: KeptSources, audit: AuditState): NextState {
  const { records, orgs, listings, refreshed } = kept;
  const { state, live, trusted } = plan.previous;
  // The live generation is the next one's base only when this one was made as
  // its copy plus the changes recorded: then the next build can replay them.
  const base = trusted && live ? live.id : null;
  const pages = new Map<string, string>();
  for (const [orgId, json] of plan.pages) pages.set(orgId, sha256(json));
  for (const [orgId, hash] of state.pages) if (plan.keepsPages(orgId)) pages.set(orgId, hash);
  return { base, changes: written.replay, files: written.files, pages, pageSize: plan.pageSize, orgs, ...nextPosts(plan, records), listings, refreshed, dropped: droppedOrgs(plan), audit };
}

/**
 * A build that changed no byte keeps the live generation; what it learned of
 * the planned organizations (their digest, records read again) and of posts
 * copied anew is kept for the next build.
 */
export function keepLive(store: TreeStore, plan: GenerationPlan, kept: KeptSources): void {
  const { records, orgs, listings, refreshed, expected } = kept;
  const { trusted, state } = plan.previous;
  const listed = [...listings].some(([orgId, listing]) => !sameListing(listing, state.listings.get(orgId)));
  if (!trusted || (orgs.size === 0 && refreshed.length === 0 && !listed)) return;
  refreshState(store, state, { orgs, ...nextPosts(plan, records), listings, refreshed, expected });
}

/** Publishes `written`, and records what the next build reuses. */
export async function publishGeneration(
  store: TreeStore,
  plan: GenerationPlan,
  written: WrittenGeneration,
  kept: KeptSources,
  audit: AuditState,
): Promise<void> {
  const { live, state } = plan.previous;
  try {
    await writeState(store, written.gen.id, nextState(plan, written, kept, audit), state, () => swapTo(store, written.gen));
  } catch (error) {
    await discardGeneration(written.gen);
    throw error;
  }
  await pruneGenerations(store, live ? [written.gen.id, live.id] : [written.gen.id]);
}
