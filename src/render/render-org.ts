/**
 * The pure middle: one organization's validated sources in, the files of its
 * API tree out. No I/O, no clock: `now` decides what is scheduled (D1).
 *
 * Rendering is split in two so a large organization streams: `planOrg` renders
 * every organization-level file (lists, blocks, categories, organization) from
 * records that need no body, and lists the published posts; `renderPostFiles`
 * renders one post's three files once its body is at hand.
 */
import { ROUTES, itemFileKinds, itemRoute, type Route } from "../route-table.js";
import type { PreviewStatus } from "../model/api.js";
import type { Publication } from "../model/shapes.js";
import { isUnchanged, recordOf, type CategoryRecord, type OrgSnapshot, type Post, type PostHead, type PostRecord, type UnchangedPost } from "../model/snapshot.js";
import { renderBlocks, renderCategories, type PageMembership } from "./blocks.js";
import { canonicalJson } from "./canonical-json.js";
import {
  renderDetail,
  renderReferences,
  renderSummary,
  sortNewestFirst,
  stateOf,
  type CategoryNames,
  type PostState,
} from "./contents.js";
import { renderOrganization } from "./organization.js";
import { DEFAULT_PAGE_SIZE, itemViews, itemsBytes, pagesOf, type ItemsParts } from "./pages.js";

/**
 * A file of the tree: the JSON its route answers, or that JSON serialized
 * canonically, as UTF-8 bytes assembled on each call (a large organization's
 * pages are a second and a third copy of its list: they are not all held).
 */
export type RenderedFile = JsonFile | AssembledFile;
export interface JsonFile {
  route: Route;
  json: unknown;
}
/** A list or a page: the items' bytes it is assembled from, so the audit checks each item once (audit/inspector.ts). */
export interface AssembledFile {
  route: Route;
  bytes: () => Buffer;
  parts: ItemsParts;
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

/**
 * The parts of an organization whose inputs are as its last build recorded
 * them (api-paths.ts `OrgPart`): their files are kept as they are, and their
 * figures are that build's.
 */
export interface KeptParts {
  rows: boolean;
  posts: boolean;
  counts: OrgCounts;
  nextPublishAt: string | null;
}

export interface OrgPlan {
  orgId: string;
  /** Every file but the three of each published post, but those of a kept part. */
  files: RenderedFile[];
  /**
   * The posts the tree holds (published ones; in the preview tree every one
   * but an archived one), newest first; the files of those parsed or read whole
   * come from renderPostFiles, those of unchanged ones are the live tree's.
   * None when the posts are kept.
   */
  posts: Post[];
  /** Each listed post's list item, as canonical JSON in UTF-8, by post file. */
  summaries: Map<string, Buffer>;
  categories: ReadonlyMap<string, CategoryRecord>;
  /** Null when the rows are kept: the membership is the last build's. */
  pages: PageMembership | null;
  counts: OrgCounts;
  /** Earliest publish instant still in the future (D1, D12), ISO 8601, or null. */
  nextPublishAt: string | null;
  kept: { rows: boolean; posts: boolean };
  /** The status a post's answers show: in the preview tree only. */
  shows: (post: PostHead) => PreviewStatus | undefined;
}

// The files of one block and of one published post, as the route table lists them.
const BLOCK_FILE_KINDS = itemFileKinds("block");
const POST_FILE_KINDS = itemFileKinds("post");

export function categoriesBySlug(org: OrgSnapshot): ReadonlyMap<string, CategoryRecord> {
  return new Map(org.categories.map((c) => [c.slug, c]));
}

/** What a post's files depend on besides its own source: its category's slug and name. */
export function categoryKeyOf(post: PostHead, categories: ReadonlyMap<string, Pick<CategoryRecord, "slug" | "value">>): string {
  const category = post.meta.category === undefined ? undefined : categories.get(post.meta.category);
  return category ? `${category.slug}\u0000${category.value}` : "";
}

/**
 * Whether a post in `state` is in `publication`'s tree: the public tree holds
 * published posts only (D1), the preview tree every post but an archived one.
 */
export function admits(publication: Publication, state: PostState): state is PreviewStatus {
  return publication === "preview" ? state !== "archived" : state === "published";
}

/** The status a post's answers show in `publication`'s tree at `now`: none in the public tree. */
export function shownStatus(publication: Publication, post: PostHead, now: number): PreviewStatus | undefined {
  if (publication === "public") return undefined;
  const state = stateOf(post, now);
  return admits(publication, state) ? state : undefined;
}

/**
 * What a post's files depend on besides its own source, as the build state
 * keeps it: its category's slug and name, and the status they show (a
 * scheduled post fallen due shows another in the preview tree).
 */
export function builtKeyOf(
  post: PostHead,
  categories: ReadonlyMap<string, Pick<CategoryRecord, "slug" | "value">>,
  status: PreviewStatus | undefined,
): string {
  const key = categoryKeyOf(post, categories);
  return status === undefined ? key : `${key}\u0000${status}`;
}

/**
 * An unchanged post that is published has its list item as built: the
 * contents list is assembled from those, and only the other posts' items are
 * rendered. A part `kept` names is not rendered (its posts, or its blocks, are
 * not even at hand).
 */
export function planOrg(
  org: OrgSnapshot,
  posts: readonly Post[],
  now: number,
  { kept, pageSize = DEFAULT_PAGE_SIZE, publication = "public" }: { kept?: KeptParts; pageSize?: number; publication?: Publication } = {},
): OrgPlan {
  const categories = categoriesBySlug(org);
  const shows = (post: PostHead) => shownStatus(publication, post, now);
  const rows = kept?.rows ? keptRows(kept) : planRows(org);
  const postsPart = kept?.posts ? keptPosts(kept, posts, now, categories, { publication, shows }) : planPosts(org, posts, now, categories, { pageSize, publication, shows });
  return {
    orgId: org.id,
    files: [...rows.files, ...postsPart.files],
    posts: postsPart.posts,
    summaries: postsPart.summaries,
    categories,
    pages: rows.pages,
    counts: { ...postsPart.counts, ...rows.counts, categories: org.categories.length },
    nextPublishAt: postsPart.nextPublishAt,
    kept: { rows: kept?.rows ?? false, posts: kept?.posts ?? false },
    shows,
  };
}

type BlockCounts = Pick<OrgCounts, "blocksPublished" | "blocksUnpublished">;
type PostCounts = Pick<OrgCounts, "postsPublished" | "postsDraft" | "postsArchived" | "postsScheduled">;

/** The files made from the database rows alone: organization, categories, blocks. */
function planRows(org: OrgSnapshot): { files: RenderedFile[]; pages: PageMembership; counts: BlockCounts } {
  const orgId = org.id;
  const files: RenderedFile[] = [];
  const add = (route: Route, json: unknown) => files.push({ route, json });
  add({ kind: "organization", orgId }, renderOrganization(org));
  add({ kind: "categories", orgId }, renderCategories(org.categories));
  const blocks = renderBlocks(org.blocks);
  add({ kind: "blocks", orgId }, blocks.list);
  for (const block of blocks.blocks) {
    for (const kind of BLOCK_FILE_KINDS) add(itemRoute(kind, orgId, block), block);
  }
  return { files, pages: blocks.pages, counts: { blocksPublished: blocks.blocks.length, blocksUnpublished: blocks.unpublished } };
}

const keptRows = ({ counts }: KeptParts) => ({
  files: [],
  pages: null,
  counts: { blocksPublished: counts.blocksPublished, blocksUnpublished: counts.blocksUnpublished },
});

/**
 * A kept posts part: its lists, pages and figures are the last build's. The
 * posts handed in are those edited in place (emit/plan-generation.ts
 * editedInPlaceAt): each keeps its place and list item, and the listed ones
 * have their own files rendered again.
 */
function keptPosts(
  { counts, nextPublishAt }: KeptParts,
  edited: readonly Post[],
  now: number,
  categories: ReadonlyMap<string, CategoryRecord>,
  { publication, shows }: { publication: Publication; shows: (post: PostHead) => PreviewStatus | undefined },
) {
  const listed = edited.filter((post) => admits(publication, stateOf(post, now)));
  const summaries = new Map<string, Buffer>();
  for (const post of listed) {
    if (isUnchanged(post)) throw new Error(`${post.file} was handed in as edited in place but is unchanged`);
    summaries.set(post.file, summaryBytes(recordOf(post), categories, shows(post)));
  }
  return {
    files: [],
    posts: listed,
    summaries,
    counts: { postsPublished: counts.postsPublished, postsDraft: counts.postsDraft, postsArchived: counts.postsArchived, postsScheduled: counts.postsScheduled },
    nextPublishAt,
  };
}

/** A post's list item as canonical JSON in UTF-8: the bytes the list, its pages and the build state hold. */
export function summaryBytes(post: PostRecord, categories: CategoryNames, status: PreviewStatus | undefined): Buffer {
  return Buffer.from(canonicalJson(renderSummary(post, categories, status)), "utf8");
}

/**
 * The contents list and its pages, each category's pages, and the listed
 * posts whose files renderPostFiles makes. The preview tree's list is ordered
 * by D2 whatever a post's status: every post has a publish date (a draft
 * too), which places it; its pages are slices of that list.
 */
function planPosts(
  org: OrgSnapshot,
  posts: readonly Post[],
  now: number,
  categories: ReadonlyMap<string, CategoryRecord>,
  { pageSize, publication, shows }: { pageSize: number; publication: Publication; shows: (post: PostHead) => PreviewStatus | undefined },
) {
  const orgId = org.id;
  const counts: PostCounts = { postsPublished: 0, postsDraft: 0, postsArchived: 0, postsScheduled: 0 };
  let nextPublish = Infinity;
  const listed: Post[] = [];
  for (const post of posts) {
    const state = stateOf(post, now);
    if (admits(publication, state)) listed.push(post);
    if (state === "published") counts.postsPublished++;
    else if (state === "scheduled") {
      counts.postsScheduled++;
      nextPublish = Math.min(nextPublish, post.publish.instant);
    } else if (state === "draft") counts.postsDraft++;
    else counts.postsArchived++;
  }

  const ordered = sortNewestFirst(listed);
  const summaries = new Map<string, Buffer>();
  // Bytes, not strings: an item serialized by concatenation is a rope of
  // small strings, several times its size, and a list of 100k of them is held
  // until the build ends.
  const items = ordered.map((post) => (isUnchanged(post) ? builtSummary(post) : summaryBytes(recordOf(post), categories, shows(post))));
  // The canonical JSON of the list is its items' canonical JSON, joined: a
  // list of 10k posts is assembled, not serialized again (nor held whole as a string).
  const list = itemsBytes(items, "]}");
  // Each item is kept as a view of the list, which holds them all: their own buffers go.
  const views = itemViews(list, items);
  ordered.forEach((post, i) => summaries.set(post.file, views[i]!));
  const files: RenderedFile[] = [{ route: { kind: "contents", orgId }, bytes: () => list, parts: { items: views, tail: "]}" } }];
  for (const { page, bytes, parts } of pagesOf(views, pageSize)) files.push({ route: { kind: "contentsPage", orgId, page: String(page) }, bytes, parts });
  // A post's category is its slug (categoriesBySlug); one the organization lacks is refused before rendering.
  const inCategory = new Map(org.categories.map((c) => [c.slug, [] as Buffer[]]));
  ordered.forEach((post, i) => {
    if (post.meta.category !== undefined) inCategory.get(post.meta.category)?.push(views[i]!);
  });
  for (const [slug, inList] of inCategory) {
    for (const { page, bytes, parts } of pagesOf(inList, pageSize)) files.push({ route: { kind: "categoryContentsPage", orgId, slug, page: String(page) }, bytes, parts });
  }
  return {
    files,
    posts: ordered,
    summaries,
    counts,
    nextPublishAt: Number.isFinite(nextPublish) ? new Date(nextPublish).toISOString() : null,
  };
}

function builtSummary(post: UnchangedPost): Buffer {
  // An unchanged post listed now and not before is read whole (needsRecordAt in emit/plan-generation.ts).
  if (post.built.summary === null) throw new Error(`${post.file} is listed but was planned without its record`);
  return post.built.summary;
}

/** A listed post's three files: by id, by slug, and its references; with its status in the preview tree. */
export function renderPostFiles(
  orgId: string,
  post: PostRecord,
  body: string,
  categories: ReadonlyMap<string, CategoryRecord>,
  status?: PreviewStatus,
): JsonFile[] {
  const detail = renderDetail(post, body, categories, status);
  return POST_FILE_KINDS.map((kind) => ({
    route: itemRoute(kind, orgId, detail),
    json: ROUTES[kind].role === "references" ? renderReferences(detail) : detail,
  }));
}
