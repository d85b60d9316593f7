/**
 * Decides, before anything is written, what the next generation is made of:
 * which files are new bytes, which are the live file's bytes (hard-linked, so
 * a sync or CDN sees nothing to do), which posts must be rendered and which
 * are unchanged, what disappears, and whether the build changes nothing at all.
 */
import { lstatSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileOf, parseApiPath } from "../api-paths.js";
import { itemFileKinds, itemRoute } from "../route-table.js";
import type { PostRecord } from "../model/snapshot.js";
import { canonicalJson } from "../render/canonical-json.js";
import { categoryKeyOf, type OrgPlan } from "../render/render-org.js";
import { readState, type BuildState, type FileEntry } from "./build-state.js";
import { fileBytes, sha256 } from "./file-bytes.js";
import { liveGeneration, type Generation, type TreeStore } from "./tree-store.js";

/** The live generation and its state: what a build starts from. */
export interface PreviousBuild {
  live: Generation | null;
  state: BuildState;
}

export async function readPreviousBuild(store: TreeStore): Promise<PreviousBuild> {
  const live = await liveGeneration(store);
  return { live, state: readState(store, live) };
}

/** The records the live generation was built from, by file, for readPosts to reuse. */
export function previousRecords(previous: PreviousBuild): Map<string, PostRecord> {
  const records = new Map<string, PostRecord>();
  for (const byFile of previous.state.posts.values()) {
    for (const [file, { key: _key, ...record }] of byFile) records.set(file, record);
  }
  return records;
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
  /** Of everything its files depend on: code, source, category. */
  key: string;
  /** Its files by id, by slug, and its references. */
  rels: string[];
  /** The live generation holds its files, rendered from the same key. */
  reuse: boolean;
  plan: OrgPlan;
}

export interface GenerationPlan {
  previous: PreviousBuild;
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
  /** The live file at `rel` as it is now: its hash and identity, undefined when there is none. */
  liveEntry: (rel: string) => FileEntry | undefined;
  /** Nothing would change: the live generation stays, nothing is written. */
  noOp: boolean;
}

export interface PlanGenerationOptions {
  /** Keep organizations not planned exactly as they are (`--org` rebuilds). */
  carryOver: boolean;
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

function postRels(orgId: string, post: PostRecord): string[] {
  return POST_FILE_KINDS.map((kind) => fileOf(itemRoute(kind, orgId, post.meta)));
}

/**
 * With `carryOver`, every organization not planned keeps its live files,
 * membership and records exactly; without it, organizations not planned disappear.
 */
export function planGeneration(previous: PreviousBuild, plans: readonly OrgPlan[], options: PlanGenerationOptions): GenerationPlan {
  const { live, state } = previous;
  const planned = new Set(plans.map((p) => p.orgId));
  const keeps = (orgId: string) => options.carryOver && !planned.has(orgId);
  const liveEntry = verifiedLiveFiles(live, state);

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
      const route = parseApiPath(file.path);
      if (!route) throw new Error(`rendered a path the interface does not describe: ${file.path}`);
      const rel = fileOf(route);
      claim(rel, `organization ${plan.orgId}`);
      const bytes = fileBytes(file.json);
      const hash = sha256(bytes);
      outputs.push({ rel, orgId: plan.orgId, bytes, sha256: hash, unchanged: liveEntry(rel)?.[0] === hash });
    }
    const cachedPosts = state.posts.get(plan.orgId);
    for (const post of plan.posts) {
      const rels = postRels(plan.orgId, post);
      for (const rel of rels) claim(rel, post.file);
      const key = sha256(`${options.codeVersion}\u0000${post.fingerprint}\u0000${categoryKeyOf(post, plan.categories)}`);
      const reuse =
        live !== null &&
        cachedPosts?.get(post.file)?.key === key &&
        rels.every((rel) => state.files.has(rel) && liveEntry(rel)?.[0] === state.files.get(rel)![0]);
      jobs.push({ orgId: plan.orgId, post, key, rels, reuse, plan });
    }
  }

  const removed: string[] = [];
  const carried: string[] = [];
  for (const rel of state.files.keys()) {
    if (owners.has(rel)) continue;
    (keeps(orgOfFile(rel)) ? carried : removed).push(rel);
  }
  const pages = new Map(plans.map((p) => [p.orgId, canonicalJson(p.pages)]));
  const pagesChanged =
    [...pages].some(([orgId, json]) => state.pages.get(orgId) !== sha256(json)) ||
    [...state.pages.keys()].some((orgId) => !pages.has(orgId) && !keeps(orgId));
  const noOp =
    live !== null &&
    removed.length === 0 &&
    !pagesChanged &&
    outputs.every((o) => o.unchanged) &&
    jobs.every((job) => job.reuse);
  return { previous, outputs, jobs, removed, carried, pages, pagesChanged, keeps, liveEntry, noOp };
}

/**
 * The live tree is the truth: the state's hash of a file is trusted only while
 * the file is the one it was taken from (same inode, mtime and size). The write
 * proxy replaces organization files between builds, and anyone could replace
 * any file; those are hashed afresh. Each file is looked at once per build.
 */
function verifiedLiveFiles(live: Generation | null, state: BuildState): (rel: string) => FileEntry | undefined {
  const verified = new Map<string, FileEntry | null>();
  return (rel) => {
    if (!live) return undefined;
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
