/**
 * The pure middle: one organization's validated sources in, every file of its
 * API tree out. No I/O, no clock: `now` decides what is scheduled (D1).
 */
import { pathOf } from "../api-paths.js";
import type { CategoryRecord, OrgSnapshot, PostRecord } from "../model/snapshot.js";
import { renderBlocks, renderCategories, type PageMembership } from "./blocks.js";
import { renderContentList, renderDetail, renderReferences, sortNewestFirst, stateOf, summaryOf } from "./contents.js";
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

export interface RenderedOrg {
  orgId: string;
  files: RenderedFile[];
  pages: PageMembership;
  counts: OrgCounts;
  /** Earliest publish instant still in the future (D1, D12), ISO 8601, or null. */
  nextPublishAt: string | null;
}

export function renderOrg(org: OrgSnapshot, posts: readonly PostRecord[], now: number): RenderedOrg {
  const orgId = org.id;
  const files: RenderedFile[] = [];
  const add = (path: string, json: unknown) => files.push({ path, json });

  add(pathOf({ kind: "organization", orgId }), renderOrganization(org));
  add(pathOf({ kind: "categories", orgId }), renderCategories(org.categories));

  const blocks = renderBlocks(org.blocks);
  add(pathOf({ kind: "blocks", orgId }), blocks.list);
  for (const block of blocks.blocks) {
    add(pathOf({ kind: "block", orgId, id: block.id }), block);
    add(pathOf({ kind: "blockBySlug", orgId, slug: block.slug }), block);
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

  const categories = new Map<string, CategoryRecord>(org.categories.map((c) => [c.slug, c]));
  const summaries = [];
  for (const post of sortNewestFirst(published)) {
    const detail = renderDetail(post, categories);
    summaries.push(summaryOf(detail));
    add(pathOf({ kind: "content", orgId, id: detail.id }), detail);
    add(pathOf({ kind: "contentBySlug", orgId, slug: detail.slug }), detail);
    add(pathOf({ kind: "references", orgId, id: detail.id }), renderReferences(detail));
  }
  add(pathOf({ kind: "contents", orgId }), renderContentList(summaries));

  return {
    orgId,
    files,
    pages: blocks.pages,
    counts,
    nextPublishAt: Number.isFinite(nextPublish) ? new Date(nextPublish).toISOString() : null,
  };
}
