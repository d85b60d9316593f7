/**
 * The pure middle: one organization's validated sources in, the files of its
 * API tree out. No I/O, no clock: `now` decides what is scheduled (D1).
 *
 * Rendering is split in two so a large organization streams: `planOrg` renders
 * every organization-level file (lists, blocks, categories, organization) from
 * records that need no body, and lists the published posts; `renderPostFiles`
 * renders one post's three files once its body is at hand.
 */
import { pathOf } from "../api-paths.js";
import { ROUTES, itemFileKinds, itemRoute } from "../route-table.js";
import type { CategoryRecord, OrgSnapshot, PostRecord } from "../model/snapshot.js";
import { renderBlocks, renderCategories, type PageMembership } from "./blocks.js";
import {
  renderContentList,
  renderDetail,
  renderReferences,
  renderSummary,
  sortNewestFirst,
  stateOf,
} from "./contents.js";
import { renderOrganization } from "./organization.js";

export interface RenderedFile {
  /** The API path this JSON answers. */
  path: string;
  json: unknown;
}

export interface OrgCounts {
  postsPublished: number;
  postsDraft: number;
  postsArchived: number;
  postsScheduled: number;
  blocksPublished: number;
  blocksUnpublished: number;
  categories: number;
}

export interface OrgPlan {
  orgId: string;
  /** Every file but the three of each published post. */
  files: RenderedFile[];
  /** Published posts, newest first; their files come from renderPostFiles. */
  posts: PostRecord[];
  categories: ReadonlyMap<string, CategoryRecord>;
  pages: PageMembership;
  counts: OrgCounts;
  /** Earliest publish instant still in the future (D1, D12), ISO 8601, or null. */
  nextPublishAt: string | null;
}

// The files of one block and of one published post, as the route table lists them.
const BLOCK_FILE_KINDS = itemFileKinds("block");
const POST_FILE_KINDS = itemFileKinds("post");

export function categoriesBySlug(org: OrgSnapshot): ReadonlyMap<string, CategoryRecord> {
  return new Map(org.categories.map((c) => [c.slug, c]));
}

/** What a post's files depend on besides its own source: its category's slug and name. */
export function categoryKeyOf(post: PostRecord, categories: ReadonlyMap<string, CategoryRecord>): string {
  const category = post.meta.category === undefined ? undefined : categories.get(post.meta.category);
  return category ? `${category.slug}\u0000${category.value}` : "";
}

export function planOrg(org: OrgSnapshot, posts: readonly PostRecord[], now: number): OrgPlan {
  const orgId = org.id;
  const files: RenderedFile[] = [];
  const add = (path: string, json: unknown) => files.push({ path, json });

  add(pathOf({ kind: "organization", orgId }), renderOrganization(org));
  add(pathOf({ kind: "categories", orgId }), renderCategories(org.categories));

  const blocks = renderBlocks(org.blocks);
  add(pathOf({ kind: "blocks", orgId }), blocks.list);
  for (const block of blocks.blocks) {
    for (const kind of BLOCK_FILE_KINDS) add(pathOf(itemRoute(kind, orgId, block)), block);
  }

  const counts: OrgCounts = {
    postsPublished: 0,
    postsDraft: 0,
    postsArchived: 0,
    postsScheduled: 0,
    blocksPublished: blocks.blocks.length,
    blocksUnpublished: blocks.unpublished,
    categories: org.categories.length,
  };
  let nextPublish = Infinity;
  const published: PostRecord[] = [];
  for (const post of posts) {
    const state = stateOf(post, now);
    if (state === "published") {
      published.push(post);
      counts.postsPublished++;
    } else if (state === "scheduled") {
      counts.postsScheduled++;
      nextPublish = Math.min(nextPublish, post.publish.instant);
    } else if (state === "draft") counts.postsDraft++;
    else counts.postsArchived++;
  }

  const categories = categoriesBySlug(org);
  const ordered = sortNewestFirst(published);
  add(pathOf({ kind: "contents", orgId }), renderContentList(ordered.map((post) => renderSummary(post, categories))));

  return {
    orgId,
    files,
    posts: ordered,
    categories,
    pages: blocks.pages,
    counts,
    nextPublishAt: Number.isFinite(nextPublish) ? new Date(nextPublish).toISOString() : null,
  };
}

/** A published post's three files: by id, by slug, and its references. */
export function renderPostFiles(
  orgId: string,
  post: PostRecord,
  body: string,
  categories: ReadonlyMap<string, CategoryRecord>,
): RenderedFile[] {
  const detail = renderDetail(post, body, categories);
  return POST_FILE_KINDS.map((kind) => ({
    path: pathOf(itemRoute(kind, orgId, detail)),
    json: ROUTES[kind].role === "references" ? renderReferences(detail) : detail,
  }));
}
