/**
 * Decides, before anything is written, what the next generation is made of:
 * which organization files have new bytes, which posts must be rendered and
 * which are unchanged, and which live files disappear.
 *
 * The build's state is the truth about the live tree (only cdsnap writes
 * there): a file's hash is taken from the state, not from the file. The one
 * exception is each organization's `organization` file, which the write proxy
 * replaces between builds: it is looked at (one `lstat` per organization, and a
 * hash when it changed). `--verify`, or a state that cannot be trusted, looks at
 * every live file instead.
 */
import { lstatSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileOf, parseApiPath, type Route } from "../api-paths.js";
import { isErrnoCode } from "../errno.js";
import { itemFileKinds, itemRoute, kindOf, ROUTES } from "../route-table.js";
import type { OrgRows } from "../db/read-snapshot.js";
import { isUnchanged, type FreshPost, type PostHead, type UnchangedPost } from "../model/snapshot.js";
import { canonicalJson } from "../render/canonical-json.js";
import { stateOf } from "../render/contents.js";
import type { PostEdit, PreviousPosts } from "../sources/read-posts.js";
import { folderOfPost, orgOfPost } from "../sources/posts-listing.js";
import { admits, builtKeyOf, shownStatus, summaryBytes, type OrgPlan } from "../render/render-org.js";
import type { ItemsParts } from "../render/pages.js";
import type { Publication } from "../model/shapes.js";
import { readState, type BuildState, type FileEntry, type StoredPost } from "./build-state.js";
import { serializedOnce, sha256 } from "./file-bytes.js";
import { listTree } from "./list-tree.js";
import { liveGeneration, type Generation, type TreeStore } from "./tree-store.js";

/** The live generation and its state: what a build starts from. */
export interface PreviousBuild {
  live: Generation | null;
  state: BuildState;
  /**
   * Whether the state's rows describe the live tree and are trusted without
   * looking at its files. False before the first build, for a damaged or older
   * state, and under `--verify`.
   */
  trusted: boolean;
}

export async function readPreviousBuild(store: TreeStore, options: { verify?: boolean } = {}): Promise<PreviousBuild> {
  const live = await liveGeneration(store);
  const state = readState(store, live);
  return { live, state, trusted: live !== null && state.generation === live.id && options.verify !== true };
}

/**
 * What readPosts may take of the live generation's posts: those parsed by this
 * code, under a trusted state only (an unchanged post's files are taken to be
 * in the live tree as its build left them), read one organization at a time.
 */
export function previousPosts(previous: PreviousBuild, codeVersion: string): Pick<PreviousPosts, "identity" | "listing" | "heads" | "headsAt" | "record"> {
  const { state, trusted } = previous;
  const ours = (orgId: string) => trusted && state.orgs.get(orgId)?.code === codeVersion;
  // Held by what readPosts is handed, not by the state: garbage once the posts are read. Read a folder at a time.
  const identities = new Map<string, ReadonlyMap<string, StoredPost>>();
  const identitiesIn = (orgId: string, folder: string) => {
    let byFile = identities.get(folder);
    if (!byFile) identities.set(folder, (byFile = state.identitiesIn(orgId, folder)));
    return byFile;
  };
  return {
    identity: (rel) => (ours(orgOfPost(rel)) ? identitiesIn(orgOfPost(rel), folderOfPost(rel)).get(rel) : undefined),
    listing: (orgId) => (ours(orgId) ? state.listings.get(orgId) : undefined),
    heads: (orgId) => (ours(orgId) ? state.headsOf(orgId) : new Map()),
    headsAt: (orgId, rels) => (ours(orgId) ? state.headsAt(orgId, rels) : new Map()),
    record: (rel) => state.recordOf(rel),
  };
}

const rowCategories = new WeakMap<OrgRows, ReadonlyMap<string, { slug: string; value: string }>>();

/** An organization's category names by slug, from its rows as read (one that validation refuses fails the build anyway). */
function categoryNamesOf(rows: OrgRows): ReadonlyMap<string, { slug: string; value: string }> {
  let categories = rowCategories.get(rows);
  if (!categories) rowCategories.set(rows, (categories = new Map(rows.categories.map((c) => [String(c.slug), { slug: String(c.slug), value: String(c.value) }]))));
  return categories;
}

/**
 * Whether an unchanged post is rendered again, and so read whole: its
 * category's slug or name changed (the categories' rows as stored, which
 * validation takes as they are), it is listed at `now` and was not (a
 * scheduled post fallen due), or its status in the preview tree changed.
 * Otherwise its files and list item stand.
 */
export function needsRecordAt(now: number, publication: Publication): (rows: OrgRows, post: UnchangedPost) => boolean {
  return (rows, post) => {
    if (builtKeyOf(post, categoryNamesOf(rows), shownStatus(publication, post, now)) !== post.built.category) return true;
    return admits(publication, stateOf(post, now)) && post.built.summary === null;
  };
}

/**
 * Whether every edited post of an organization keeps its place, so the build
 * renders only its files and the organization's other posts, lists and pages
 * stand as the live tree has them: the posts part was made by this code, page
 * size and categories (its recorded digest, over the recorded bytes), no
 * scheduled post is due, and each edited post has the id, slug, status,
 * publish instant, category and list item (its bytes, or none) it was built
 * with. Its figures and the audit's expectations of its posts are then the
 * recorded ones.
 */
export function editedInPlaceAt(
  previous: PreviousBuild,
  { codeVersion, pageSize }: { codeVersion: string; pageSize: number },
  now: number,
  publication: Publication,
): (rows: OrgRows, edits: readonly PostEdit[]) => boolean {
  const { state, trusted } = previous;
  return (rows, edits) => {
    const stored = state.orgs.get(rows.id);
    const recorded = state.listings.get(rows.id);
    if (!trusted || !stored || !recorded || stored.code !== codeVersion || !state.expectedOf(rows.id)?.posts) return false;
    if (stored.nextPublishAt !== null && Date.parse(stored.nextPublishAt) <= now) return false;
    if (stored.postsDigest !== postsDigestOf(codeVersion, pageSize, rows, recorded.content)) return false;
    // Rows as stored: the digest above says they are the ones the last build validated.
    const categories = categoryNamesOf(rows);
    return edits.every(({ before, after }) => {
      const same = (key: "id" | "slug" | "status" | "category") => before.meta[key] === after.meta[key];
      if (!same("id") || !same("slug") || !same("status") || !same("category") || before.publish.instant !== after.publish.instant) return false;
      const status = shownStatus(publication, after, now);
      if (builtKeyOf(after, categories, status) !== before.built.category) return false;
      if (!admits(publication, stateOf(after, now))) return before.built.summary === null;
      return before.built.summary !== null && before.built.summary.equals(summaryBytes(after, categories, status));
    });
  };
}

/** Of everything an organization's `rows` part is made from: the code and its rows as stored. */
export function rowsDigestOf(codeVersion: string, rows: OrgRows): string {
  return sha256(`${codeVersion}\u0001${JSON.stringify(rows)}`);
}

/**
 * Of everything an organization's `posts` part is made from but the clock:
 * the code, the page size, its categories' rows (a post shows its category's
 * name, and each category has its pages) and each post's file and bytes
 * (`content`, PostsListing.content).
 */
export function postsDigestOf(codeVersion: string, pageSize: number, rows: OrgRows, content: string): string {
  return sha256(`${codeVersion}\u0001${pageSize}\u0001${JSON.stringify(rows.categories)}\u0001${content}`);
}

/**
 * The parts of an organization that are as the live generation's build left
 * them, so a build keeps their files without validating their inputs again
 * (that build validated the same inputs with the same code): the rows part
 * while its digest is the same; the posts part while its digest is the same
 * (`content` is null when a post's bytes changed) and no scheduled post is due
 * at `now`. Nothing is kept without a trusted state made by this code. One
 * part alone is kept only while the audit's recorded expectations of the
 * organization are at hand: the kept part's are taken from them.
 */
export function keptPartsOf(
  previous: PreviousBuild,
  { codeVersion, pageSize }: { codeVersion: string; pageSize: number },
  now: number,
  rows: OrgRows,
  content: string | null,
): { rows: boolean; posts: boolean } {
  const stored = previous.state.orgs.get(rows.id);
  const none = { rows: false, posts: false };
  if (!previous.trusted || stored === undefined || stored.code !== codeVersion) return none;
  const due = stored.nextPublishAt !== null && Date.parse(stored.nextPublishAt) <= now;
  const kept = {
    rows: stored.rowsDigest === rowsDigestOf(codeVersion, rows),
    posts: content !== null && !due && stored.postsDigest === postsDigestOf(codeVersion, pageSize, rows, content),
  };
  if (kept.rows !== kept.posts && !previous.state.expectedOf(rows.id)?.posts) return none;
  return kept;
}

/** An organization-level file, rendered in memory. */
export interface Output {
  rel: string;
  orgId: string;
  /** Its bytes: a list's pages are assembled again when they are written, never all held. */
  bytes: () => Buffer;
  /** What a list or a page is assembled from. */
  parts?: ItemsParts;
  size: number;
  sha256: string;
  /** Its bytes are the live file's. */
  unchanged: boolean;
}

/**
 * A published post to render: its files (postRels) come from its record and
 * body. One unchanged keeps the live generation's files, and its paths are not
 * even made: its id and slug, so its files, are those its last build claimed.
 */
export type PostJob = { orgId: string; plan: OrgPlan } & ({ reuse: false; post: FreshPost; rels: string[] } | { reuse: true; post: UnchangedPost });

export type RenderJob = Extract<PostJob, { reuse: false }>;

export interface GenerationPlan {
  previous: PreviousBuild;
  /** The organizations whose posts part is planned: their posts are the ones now held. */
  postsPlanned: OrgPlan[];
  /** The planned organizations whose posts part is kept: the posts now held of one are those edited in place. */
  postsKept: OrgPlan[];
  outputs: Output[];
  jobs: PostJob[];
  /** Files of the live generation that the next one does not have. */
  removed: string[];
  /** Untrusted, the live files of the organizations kept as they are, linked into the next generation (trusted, it starts as the live one's copy). */
  carried: string[];
  /** Trusted, how many files each planned organization keeps in its kept part. */
  keptFiles: Map<string, number>;
  /** The organizations of the live tree kept as they are. */
  keptOrgs: string[];
  /** Each planned organization's D8 page membership, as canonical JSON. */
  pages: Map<string, string>;
  pagesChanged: boolean;
  /** Organizations that keep their live files, membership and records. */
  keeps: (orgId: string) => boolean;
  /** Organizations that keep their live page membership: those kept, and those whose rows part is. */
  keepsPages: (orgId: string) => boolean;
  /** The rendering and parsing code this plan was made by. */
  codeVersion: string;
  /** How many items a page of a list holds. */
  pageSize: number;
  /** The live file at `rel`: its hash and identity, undefined when there is none. */
  liveEntry: (rel: string) => FileEntry | undefined;
}

export interface PlanGenerationOptions {
  /**
   * Whether an organization not planned keeps its live files, membership and
   * records exactly (outside an `--org` build, unchanged ones); the others
   * disappear.
   */
  keep: (orgId: string) => boolean;
  /** Identifies the rendering code: a new version re-renders every post. */
  codeVersion: string;
  pageSize: number;
}

export const apiPathOfFile = (rel: string) => `/${rel.slice(0, -".json".length)}`;

export function orgOfFile(rel: string): string {
  const route = parseApiPath(apiPathOfFile(rel));
  if (!route) throw new Error(`the build state names a file no API path maps to: ${rel}`);
  return route.orgId;
}

const POST_FILE_KINDS = itemFileKinds("post");
const POSTS_LIST = kindOf("post", "list");

/** How many files a published post has. */
export const POST_FILES = POST_FILE_KINDS.length;

/** A published post's files: by id, by slug, and its references, in the route table's order. */
export function postRels(orgId: string, post: Pick<PostHead, "meta">): string[] {
  return POST_FILE_KINDS.map((kind) => fileOf(itemRoute(kind, orgId, post.meta)));
}

/** The one file of each organization that the write proxy replaces between builds. */
export const proxyFileOf = (orgId: string): string => fileOf({ kind: "organization", orgId });

/**
 * Every organization not planned that `keep` names keeps its live files,
 * membership and records exactly; the others not planned disappear.
 */
export function planGeneration(previous: PreviousBuild, plans: readonly OrgPlan[], options: PlanGenerationOptions): GenerationPlan {
  const { live, state, trusted } = previous;
  const planned = new Map(plans.map((p) => [p.orgId, p]));
  const keeps = (orgId: string) => !planned.has(orgId) && options.keep(orgId);
  const keepsPages = (orgId: string) => keeps(orgId) || planned.get(orgId)?.kept.rows === true;
  const liveEntry = liveEntries(live, state, trusted);

  const owners = new Map<string, string>();
  const claim = (rel: string, owner: string) => {
    const other = owners.get(rel);
    if (other !== undefined) throw new Error(`two outputs claim ${apiPathOfFile(rel)} (${other} and ${owner})`);
    owners.set(rel, owner);
  };
  const outputs: Output[] = [];
  const jobs: PostJob[] = [];
  const serialized = serializedOnce();
  const bytesOf = (file: OrgPlan["files"][number]) => {
    if ("json" in file) return serialized(file.json);
    const bytes = file.bytes();
    return { bytes, sha256: sha256(bytes) };
  };
  for (const plan of plans) {
    for (const file of plan.files) {
      const rel = fileOf(file.route);
      claim(rel, `organization ${plan.orgId}`);
      const { bytes, sha256: hash } = bytesOf(file);
      outputs.push({
        rel,
        orgId: plan.orgId,
        bytes: "bytes" in file ? file.bytes : () => bytes,
        parts: "parts" in file ? file.parts : undefined,
        size: bytes.length,
        sha256: hash,
        unchanged: liveEntry(rel)?.[0] === hash,
      });
    }
    // A kept posts part has no post to plan but those edited in place.
    for (const post of plan.posts) {
      if (isUnchanged(post)) {
        if (!trusted) throw new Error(`${post.file} was planned unchanged without a trusted build state`);
        jobs.push({ orgId: plan.orgId, plan, reuse: true, post });
        continue;
      }
      const rels = postRels(plan.orgId, post);
      for (const rel of rels) claim(rel, post.file);
      jobs.push({ orgId: plan.orgId, plan, reuse: false, post, rels });
    }
  }

  const liveOrgs = [...new Set([...state.pages.keys(), ...state.orgs.keys()])];
  const reused = new Set(jobs.flatMap((job) => (job.reuse ? [job.post.file] : [])));
  const { removed, carried, keptFiles } = trusted ? goneFromTrusted(state, plans, liveOrgs, keeps, owners, reused) : goneFromUntrusted(live, keeps, owners);
  const pages = new Map(plans.flatMap((p) => (p.pages === null ? [] : [[p.orgId, canonicalJson(p.pages)] as const])));
  const pagesChanged =
    [...pages].some(([orgId, json]) => state.pages.get(orgId) !== sha256(json)) ||
    [...state.pages.keys()].some((orgId) => !pages.has(orgId) && !keepsPages(orgId));
  const postsPlanned = plans.filter((p) => !p.kept.posts);
  const postsKept = plans.filter((p) => p.kept.posts);
  const keptOrgs = liveOrgs.filter(keeps);
  return { previous, postsPlanned, postsKept, outputs, jobs, removed, carried, keptFiles, keptOrgs, pages, pagesChanged, keeps, keepsPages, liveEntry, codeVersion: options.codeVersion, pageSize: options.pageSize };
}

interface Gone {
  removed: string[];
  carried: string[];
  keptFiles: Map<string, number>;
}

/**
 * Trusted, every live file is one a build wrote, in its organization's folder,
 * and the next generation starts as the live one's copy: nothing is carried.
 * The files that may go are looked up where they are: those of an organization
 * neither planned nor kept, of a planned rows part, and of a planned posts part
 * (its list and pages, and the live build's published posts, from their heads,
 * but those published again unchanged); a kept part's are only counted.
 */
function goneFromTrusted(
  state: BuildState,
  plans: readonly OrgPlan[],
  liveOrgs: readonly string[],
  keeps: (orgId: string) => boolean,
  owners: ReadonlyMap<string, string>,
  reused: ReadonlySet<string>,
): Gone {
  const removed: string[] = [];
  const keptFiles = new Map<string, number>();
  const goesUnlessClaimed = (rel: string) => {
    if (!owners.has(rel)) removed.push(rel);
  };
  const planned = new Map(plans.map((p) => [p.orgId, p]));
  const rendered = new Map(plans.map((p) => [p.orgId, p.posts.filter((post) => !reused.has(post.file)).length * POST_FILES]));
  for (const orgId of liveOrgs) if (!planned.has(orgId) && !keeps(orgId)) for (const rel of state.files.of(orgId).keys()) removed.push(rel);
  for (const { orgId, kept } of plans) {
    let count = 0;
    if (kept.rows) count += state.files.count(orgId, "rows");
    else for (const rel of state.files.of(orgId, "rows").keys()) goesUnlessClaimed(rel);
    // Of a kept posts part, the files of the posts edited in place are rendered again.
    if (kept.posts) count += state.files.count(orgId, "posts") - rendered.get(orgId)!;
    else {
      goesUnlessClaimed(fileOf({ kind: POSTS_LIST, orgId } as Route));
      for (const rel of state.files.pagesOf(orgId).keys()) goesUnlessClaimed(rel);
      for (const head of state.headsOf(orgId).values()) {
        if (head.built.summary !== null && !reused.has(head.file)) postRels(orgId, head).forEach(goesUnlessClaimed);
      }
    }
    keptFiles.set(orgId, count);
  }
  return { removed, carried: [], keptFiles };
}

/** Untrusted, the live tree is listed: a file is carried when its organization is kept, else it goes. */
function goneFromUntrusted(live: Generation | null, keeps: (orgId: string) => boolean, owners: ReadonlyMap<string, string>): Gone {
  const removed: string[] = [];
  const carried: string[] = [];
  for (const rel of live === null ? [] : listTree(live.tree).files) {
    if (owners.has(rel)) continue;
    const route = parseApiPath(apiPathOfFile(rel));
    // A stray file (put there by hand) goes, whatever organization it names.
    (route !== null && ROUTES[route.kind].access === "read" && keeps(route.orgId) ? carried : removed).push(rel);
  }
  return { removed, carried, keptFiles: new Map() };
}

/**
 * The live file at a path. Trusted, the state's entry is the answer, but for
 * organization files, which the write proxy replaces: their hash is trusted
 * only while the file is the one it was taken from (same inode, mtime and
 * size). Untrusted, every file is looked at that way. Each file is looked at
 * once per build.
 */
function liveEntries(live: Generation | null, state: BuildState, trusted: boolean): (rel: string) => FileEntry | undefined {
  const verified = new Map<string, FileEntry | null>();
  const orgFiles = new Set([...state.pages.keys()].map(proxyFileOf));
  return (rel) => {
    if (!live) return undefined;
    if (trusted && !orgFiles.has(rel)) return state.files.get(rel);
    let entry = verified.get(rel);
    if (entry === undefined) {
      entry = null;
      try {
        const info = lstatSync(path.join(live.tree, rel));
        const known = state.files.get(rel);
        if (info.isFile()) {
          const same = known && known[1] === info.ino && known[2] === info.mtimeMs && known[3] === info.size;
          entry = [same ? known[0] : sha256(readFileSync(path.join(live.tree, rel))), info.ino, info.mtimeMs, info.size];
        }
      } catch (error) {
        // Not in the live tree, or a file stands where its folder was (a tree changed by hand, which --verify repairs).
        if (!isErrnoCode(error, "ENOENT", "ENOTDIR")) throw error;
      }
      verified.set(rel, entry);
    }
    return entry ?? undefined;
  };
}
