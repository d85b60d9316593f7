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
import { fileOf, orgInFolder, parseApiPath, partOfFile } from "../api-paths.js";
import { itemFileKinds, itemRoute, ROUTES } from "../route-table.js";
import type { OrgRows } from "../db/read-snapshot.js";
import type { CategoryRecord, PostRecord } from "../model/snapshot.js";
import { canonicalJson, compareCodeUnits } from "../render/canonical-json.js";
import type { PostIdentity, PreviousPosts } from "../sources/read-posts.js";
import { categoryKeyOf, type CachedSummary, type OrgPlan } from "../render/render-org.js";
import { readState, type BuildState, type FileEntry } from "./build-state.js";
import { renderedBytes, sha256 } from "./file-bytes.js";
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

/** What readPosts may reuse of the live generation's posts: records parsed by this code only, read one organization at a time. */
export function previousPosts(previous: PreviousBuild, codeVersion: string): Pick<PreviousPosts, "identity" | "records"> {
  const { state } = previous;
  const ours = (orgId: string) => state.orgs.get(orgId)?.code === codeVersion;
  return {
    identity: (rel) => {
      const stored = state.posts.get(rel);
      return stored && ours(stored.orgId) ? stored : undefined;
    },
    records: (orgId) => (ours(orgId) ? state.postsOf(orgId) : new Map()),
  };
}

/** Of everything an organization's `rows` part is made from: the code and its rows as stored. */
export function rowsDigestOf(codeVersion: string, rows: OrgRows): string {
  return sha256(`${codeVersion}\u0001${JSON.stringify(rows)}`);
}

/**
 * Of everything an organization's `posts` part is made from but the clock:
 * the code, its categories' rows (a post shows its category's name) and each
 * post's file and bytes.
 */
export function postsDigestOf(codeVersion: string, rows: OrgRows, posts: readonly PostIdentity[]): string {
  const files = posts.map((p) => `${p.rel}\u0000${p.sha256}`).sort(compareCodeUnits);
  return sha256(`${codeVersion}\u0001${JSON.stringify(rows.categories)}\u0001${files.join("\u0001")}`);
}

/**
 * The parts of an organization that are as the live generation's build left
 * them, so a build keeps their files without validating their inputs again
 * (that build validated the same inputs with the same code): the rows part
 * while its digest is the same; the posts part while its digest is the same
 * (`posts` is null when a post's bytes changed) and no scheduled post is due
 * at `now`. Nothing is kept without a trusted state made by this code. One
 * part alone is kept only while the audit's recorded expectations of the
 * organization are at hand: the kept part's are taken from them.
 */
export function keptPartsOf(
  previous: PreviousBuild,
  codeVersion: string,
  now: number,
  rows: OrgRows,
  posts: readonly PostIdentity[] | null,
): { rows: boolean; posts: boolean } {
  const stored = previous.state.orgs.get(rows.id);
  const none = { rows: false, posts: false };
  if (!previous.trusted || stored === undefined || stored.code !== codeVersion) return none;
  const due = stored.nextPublishAt !== null && Date.parse(stored.nextPublishAt) <= now;
  const kept = {
    rows: stored.rowsDigest === rowsDigestOf(codeVersion, rows),
    posts: posts !== null && !due && stored.postsDigest === postsDigestOf(codeVersion, rows, posts),
  };
  if (kept.rows !== kept.posts && !previous.state.expectedOf(rows.id)?.posts) return none;
  return kept;
}

/** An organization-level file, rendered in memory. */
export interface Output {
  rel: string;
  orgId: string;
  bytes: Buffer;
  sha256: string;
  /** Its bytes are the live file's. */
  unchanged: boolean;
}

/** A published post: its three files come from its record and body. */
export interface PostJob {
  orgId: string;
  post: PostRecord;
  /** Of everything its files depend on: code, source bytes, category. */
  key: string;
  /** Its files (postRels): what it keeps when reused, what it leaves when removed. */
  rels: string[];
  /** The live generation holds its files, rendered from the same key. */
  reuse: boolean;
  plan: OrgPlan;
}

export interface GenerationPlan {
  previous: PreviousBuild;
  /** The organizations whose posts part is planned: their post records are the ones now held. */
  postsPlanned: string[];
  outputs: Output[];
  jobs: PostJob[];
  /** Files of the live generation that the next one does not have. */
  removed: string[];
  /** Files of organizations carried over (`--org` builds) as they are. */
  carried: string[];
  /** Each planned organization's D8 page membership, as canonical JSON. */
  pages: Map<string, string>;
  pagesChanged: boolean;
  /** Organizations that keep their live files, membership and records. */
  keeps: (orgId: string) => boolean;
  /** Organizations that keep their live page membership: those kept, and those whose rows part is. */
  keepsPages: (orgId: string) => boolean;
  /** The rendering and parsing code this plan was made by. */
  codeVersion: string;
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
}

export const apiPathOfFile = (rel: string) => `/${rel.slice(0, -".json".length)}`;

export function orgOfFile(rel: string): string {
  const route = parseApiPath(apiPathOfFile(rel));
  if (!route) throw new Error(`the build state names a file no API path maps to: ${rel}`);
  return route.orgId;
}

const POST_FILE_KINDS = itemFileKinds("post");

/** A published post's files: by id, by slug, and its references, in the route table's order. */
export function postRels(orgId: string, post: Pick<PostRecord, "meta">): string[] {
  return POST_FILE_KINDS.map((kind) => fileOf(itemRoute(kind, orgId, post.meta)));
}

// The plan asks for each post's key twice (its list item, its files): hashed once.
const keys = new WeakMap<PostRecord, { of: string; key: string }>();

/** Of everything a post's files and list item are made from: the code, its source's bytes, its category. */
export function postKeyOf(codeVersion: string, post: PostRecord, categories: ReadonlyMap<string, CategoryRecord>): string {
  const of = `${codeVersion}\u0000${post.sha256}\u0000${categoryKeyOf(post, categories)}`;
  const known = keys.get(post);
  if (known?.of === of) return known.key;
  const key = sha256(of);
  keys.set(post, { of, key });
  return key;
}

/**
 * The list item a post had in the live generation, while its key is the same:
 * the contents lists are assembled from these and the changed posts' items.
 */
export function cachedSummaries(previous: PreviousBuild, orgId: string, codeVersion: string): CachedSummary {
  const cached = previous.state.postsOf(orgId);
  return (post, categories) => {
    const known = cached.get(post.file);
    return known?.summary !== undefined && known.key === postKeyOf(codeVersion, post, categories) ? known.summary : undefined;
  };
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
  // Trusted, the live files are needed only to find what goes and what is carried:
  // a build that plans nothing and drops no organization reads none of their rows.
  const everyOrgKept = trusted && plans.length === 0 && [...state.pages.keys()].every(keeps);
  const liveFiles: Iterable<string> = live === null || everyOrgKept ? [] : trusted ? state.files.keys() : listTree(live.tree).files;
  const liveEntry = liveEntries(live, state, trusted);

  const owners = new Map<string, string>();
  const claim = (rel: string, owner: string) => {
    const other = owners.get(rel);
    if (other !== undefined) throw new Error(`two outputs claim ${apiPathOfFile(rel)} (${other} and ${owner})`);
    owners.set(rel, owner);
  };
  const outputs: Output[] = [];
  const jobs: PostJob[] = [];
  for (const plan of plans) {
    for (const file of plan.files) {
      const rel = fileOf(file.route);
      claim(rel, `organization ${plan.orgId}`);
      const bytes = renderedBytes(file);
      const hash = sha256(bytes);
      outputs.push({ rel, orgId: plan.orgId, bytes, sha256: hash, unchanged: liveEntry(rel)?.[0] === hash });
    }
    // A kept posts part has no post to plan, and its records are not read.
    if (plan.kept.posts) continue;
    const cachedPosts = state.postsOf(plan.orgId);
    for (const post of plan.posts) {
      const rels = postRels(plan.orgId, post);
      for (const rel of rels) claim(rel, post.file);
      const key = postKeyOf(options.codeVersion, post, plan.categories);
      const reuse =
        live !== null &&
        cachedPosts.get(post.file)?.key === key &&
        rels.every((rel) => state.files.has(rel) && liveEntry(rel)?.[0] === state.files.get(rel)![0]);
      jobs.push({ orgId: plan.orgId, post, key, rels, reuse, plan });
    }
  }

  const removed: string[] = [];
  const carried: string[] = [];
  // Trusted, every file is one a build wrote, in its organization's folder.
  const kept = (rel: string): boolean => {
    if (trusted) {
      const orgId = orgInFolder(rel);
      return keeps(orgId) || planned.get(orgId)?.kept[partOfFile(rel)] === true;
    }
    const route = parseApiPath(apiPathOfFile(rel));
    // A stray file in a tree that is not trusted (put there by hand) goes, whatever organization it names.
    return route !== null && ROUTES[route.kind].access === "read" && keeps(route.orgId);
  };
  for (const rel of liveFiles) {
    if (owners.has(rel)) continue;
    (kept(rel) ? carried : removed).push(rel);
  }
  const pages = new Map(plans.flatMap((p) => (p.pages === null ? [] : [[p.orgId, canonicalJson(p.pages)] as const])));
  const pagesChanged =
    [...pages].some(([orgId, json]) => state.pages.get(orgId) !== sha256(json)) ||
    [...state.pages.keys()].some((orgId) => !pages.has(orgId) && !keepsPages(orgId));
  const postsPlanned = plans.filter((p) => !p.kept.posts).map((p) => p.orgId);
  return { previous, postsPlanned, outputs, jobs, removed, carried, pages, pagesChanged, keeps, keepsPages, liveEntry, codeVersion: options.codeVersion };
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
      } catch {
        entry = null;
      }
      verified.set(rel, entry);
    }
    return entry ?? undefined;
  };
}
