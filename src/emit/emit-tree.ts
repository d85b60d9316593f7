/**
 * Turns planned organizations into the next generation of the tree.
 *
 * The live generation's manifest (beside the tree, never in it) holds the hash
 * of every file and, per post, the record it was rendered from and the key of
 * everything its files depend on. So a rebuild renders only posts whose source
 * or category changed; files whose bytes are unchanged are hard-linked from the
 * live generation (same inode, same mtime, nothing rewritten); and a build that
 * changes nothing writes nothing and keeps the live generation.
 */
import { createHash } from "node:crypto";
import { closeSync, fstatSync, linkSync, lstatSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileOf, parseApiPath } from "../api-paths.js";
import { FILE_CONCURRENCY, mapLimit } from "../concurrency.js";
import type { PostRecord } from "../model/snapshot.js";
import type { PageMembership } from "../render/blocks.js";
import { canonicalJson } from "../render/canonical-json.js";
import { readVersioned, writeJsonLines } from "./json-lines.js";
import { listTree, type Listing } from "./list-tree.js";
import { categoryKeyOf, renderPostFiles, type OrgPlan } from "../render/render-org.js";
import {
  generation,
  liveGeneration,
  manifestFileOf,
  nextGenerationId,
  pagesFileOf,
  pruneGenerations,
  recycleGeneration,
  swapTo,
  type Generation,
  type TreeStore,
} from "./tree-store.js";

type CachedPost = Omit<PostRecord, "body"> & { key: string };

/** Posts rendered between two turns of the event loop. */
const YIELD_EVERY = 256;

/** A tree file: the SHA-256 of its bytes, and the identity (inode, mtime, size) they were hashed at. */
type FileEntry = [sha256: string, ino: number, mtimeMs: number, size: number];

interface Manifest {
  files: Map<string, FileEntry>;
  /** The hash of each organization's page membership file. */
  pages: Map<string, string>;
  /** Per organization, the record of every post by file. */
  posts: Map<string, Map<string, CachedPost>>;
}

const emptyManifest = (): Manifest => ({ files: new Map(), pages: new Map(), posts: new Map() });

const MANIFEST_VERSION = 4;

/** One line per file, page membership and post record, after a header line naming the version. */
type ManifestLine =
  | ["file", rel: string, ...entry: FileEntry]
  | ["pages", orgId: string, hash: string]
  | ["post", orgId: string, file: string, record: CachedPost];

function* manifestLines(manifest: Manifest): Generator<unknown> {
  yield { version: MANIFEST_VERSION };
  for (const [rel, entry] of manifest.files) yield ["file", rel, ...entry] satisfies ManifestLine;
  for (const [orgId, hash] of manifest.pages) yield ["pages", orgId, hash] satisfies ManifestLine;
  for (const [orgId, byFile] of manifest.posts) {
    for (const [file, record] of byFile) yield ["post", orgId, file, record] satisfies ManifestLine;
  }
}

export interface EmitStats {
  written: number;
  unchanged: number;
  removed: number;
}

/** API paths this build added, changed and removed (for CDN purges and syncs). */
export interface ChangedPaths {
  added: string[];
  changed: string[];
  removed: string[];
}

export interface EmitResult {
  generation: string | null;
  swapped: boolean;
  perOrg: Map<string, EmitStats>;
  changes: ChangedPaths;
  /** Posts rendered by this build (the others were unchanged and linked). */
  postsRendered: number;
}

export interface EmitOptions {
  /** Keep organizations not planned exactly as they are (`--org` rebuilds). */
  carryOver: boolean;
  /** The live generation as the build found it (read once, by the caller); loaded when absent. */
  previous?: Previous;
  /** Every post record of each planned organization (all states), kept for the next build. */
  records: ReadonlyMap<string, readonly PostRecord[]>;
  /** Identifies the rendering code: a new version re-renders every post. */
  codeVersion: string;
  loadBody: (post: PostRecord) => string;
  /** Runs on the complete next generation before it goes live; a throw cancels the swap. */
  beforeSwap?: (gen: Generation, context: SwapContext) => Promise<void>;
  /** Sees the bytes of every file this build writes (the audit inspects them without reading back). */
  onWrite?: (rel: string, bytes: Buffer) => void;
  onProgress?: (done: number, total: number) => void;
}

export interface SwapContext {
  live: Generation | null;
  /** The SHA-256 of each file of the next generation. */
  sha256Of: (rel: string) => string | undefined;
}

export function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The bytes of a tree file: canonical JSON, so equal data is equal bytes. */
export function fileBytes(json: unknown): Buffer {
  return Buffer.from(canonicalJson(json), "utf8");
}

/** The generation's manifest; empty when it is missing, damaged or of another version (the build then starts afresh). */
export async function readManifest(gen: Generation): Promise<Manifest> {
  const manifest = emptyManifest();
  const header = await readVersioned(manifestFileOf(gen), MANIFEST_VERSION, (value) => {
    const line = value as ManifestLine;
    if (line[0] === "file") manifest.files.set(line[1], [line[2], line[3], line[4], line[5]]);
    else if (line[0] === "pages") manifest.pages.set(line[1], line[2]);
    else postsOf(manifest, line[1]).set(line[2], line[3]);
  });
  return header ? manifest : emptyManifest();
}

function postsOf(manifest: Manifest, orgId: string): Map<string, CachedPost> {
  let byFile = manifest.posts.get(orgId);
  if (!byFile) manifest.posts.set(orgId, (byFile = new Map()));
  return byFile;
}

/** The live generation and its manifest: what a build starts from. */
export interface Previous {
  live: Generation | null;
  manifest: Manifest;
}

export async function loadPrevious(store: TreeStore): Promise<Previous> {
  const live = await liveGeneration(store);
  return { live, manifest: live ? await readManifest(live) : emptyManifest() };
}

/** The records the live generation was built from, by file, for readPosts to reuse. */
export function previousRecords(previous: Previous): Map<string, PostRecord> {
  const records = new Map<string, PostRecord>();
  for (const byFile of previous.manifest.posts.values()) {
    for (const [file, { key: _key, ...record }] of byFile) records.set(file, record);
  }
  return records;
}

/** Reads the D8 membership the build wrote for an organization. */
export async function readPages(gen: Generation, orgId: string): Promise<PageMembership | null> {
  try {
    return JSON.parse(await readFile(pagesFileOf(gen, orgId), "utf8")) as PageMembership;
  } catch {
    return null;
  }
}

const apiPathOfFile = (rel: string) => `/${rel.slice(0, -".json".length)}`;

function orgOfFile(rel: string): string {
  const route = parseApiPath(apiPathOfFile(rel));
  if (!route) throw new Error(`manifest names a file no API path maps to: ${rel}`);
  return route.orgId;
}

interface Output {
  rel: string;
  orgId: string;
  bytes: Buffer;
  sha256: string;
}

interface PostJob {
  orgId: string;
  post: PostRecord;
  key: string;
  rels: string[];
  reuse: boolean;
  plan: OrgPlan;
}

function postRels(orgId: string, post: PostRecord): string[] {
  const { id, slug } = post.meta;
  return [fileOf({ kind: "content", orgId, id }), fileOf({ kind: "contentBySlug", orgId, slug }), fileOf({ kind: "references", orgId, id })];
}

/**
 * Writes the planned organizations as the next generation and swaps it in.
 * With `carryOver`, every organization not planned keeps its live files,
 * membership and records exactly; without it, organizations not planned disappear.
 */
export async function emitTree(store: TreeStore, plans: readonly OrgPlan[], options: EmitOptions): Promise<EmitResult> {
  const { live, manifest } = options.previous ?? (await loadPrevious(store));
  const planned = new Set(plans.map((p) => p.orgId));
  const keeps = (orgId: string) => options.carryOver && !planned.has(orgId);

  // The live tree is the truth: the manifest's hash of a file is trusted only
  // while the file is the one it was taken from (same inode, mtime and size).
  // The write proxy replaces organization files between builds, and anyone
  // could replace any file; those are hashed afresh.
  const verified = new Map<string, FileEntry | null>();
  const liveEntry = (rel: string): FileEntry | undefined => {
    if (!live) return undefined;
    let entry = verified.get(rel);
    if (entry === undefined) {
      entry = null;
      try {
        const info = lstatSync(path.join(live.tree, rel));
        const known = manifest.files.get(rel);
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

  const perOrg = new Map<string, EmitStats>();
  const statsOf = (orgId: string) => {
    let s = perOrg.get(orgId);
    if (!s) perOrg.set(orgId, (s = { written: 0, unchanged: 0, removed: 0 }));
    return s;
  };
  const owners = new Map<string, string>();
  const claim = (rel: string, owner: string) => {
    const previous = owners.get(rel);
    if (previous !== undefined) throw new Error(`two outputs claim ${apiPathOfFile(rel)} (${previous} and ${owner})`);
    owners.set(rel, owner);
  };

  // Organization-level files are rendered in memory; posts are jobs.
  const outputs: Output[] = [];
  const jobs: PostJob[] = [];
  for (const plan of plans) {
    statsOf(plan.orgId);
    for (const file of plan.files) {
      const route = parseApiPath(file.path);
      if (!route) throw new Error(`rendered a path the interface does not describe: ${file.path}`);
      const rel = fileOf(route);
      claim(rel, `organization ${plan.orgId}`);
      const bytes = fileBytes(file.json);
      outputs.push({ rel, orgId: plan.orgId, bytes, sha256: sha256(bytes) });
    }
    const cachedPosts = manifest.posts.get(plan.orgId);
    for (const post of plan.posts) {
      const rels = postRels(plan.orgId, post);
      for (const rel of rels) claim(rel, post.file);
      const key = sha256(`${options.codeVersion}\u0000${post.fingerprint}\u0000${categoryKeyOf(post, plan.categories)}`);
      const reuse =
        live !== null &&
        cachedPosts?.get(post.file)?.key === key &&
        rels.every((rel) => manifest.files.has(rel) && liveEntry(rel)?.[0] === manifest.files.get(rel)![0]);
      jobs.push({ orgId: plan.orgId, post, key, rels, reuse, plan });
    }
  }

  const unchangedOutputs = new Set<string>();
  for (const output of outputs) if (live && liveEntry(output.rel)?.[0] === output.sha256) unchangedOutputs.add(output.rel);

  const removedRels = [...manifest.files.keys()].filter((rel) => !owners.has(rel) && !keeps(orgOfFile(rel)));
  const pages = new Map(plans.map((p) => [p.orgId, canonicalJson(p.pages)]));
  const pagesChanged =
    [...pages].some(([orgId, json]) => manifest.pages.get(orgId) !== sha256(json)) ||
    [...manifest.pages.keys()].some((orgId) => !pages.has(orgId) && !keeps(orgId));

  const noOp =
    live !== null &&
    removedRels.length === 0 &&
    !pagesChanged &&
    unchangedOutputs.size === outputs.length &&
    jobs.every((job) => job.reuse);
  if (noOp) {
    for (const output of outputs) statsOf(output.orgId).unchanged++;
    for (const job of jobs) statsOf(job.orgId).unchanged += job.rels.length;
    return { generation: live.id, swapped: false, perOrg, changes: { added: [], changed: [], removed: [] }, postsRendered: 0 };
  }

  const gen = generation(store, await nextGenerationId(store));
  const next = emptyManifest();
  const changes: ChangedPaths = { added: [], changed: [], removed: removedRels.map(apiPathOfFile) };
  for (const rel of removedRels) statsOf(orgOfFile(rel)).removed++;
  let postsRendered = 0;
  try {
    const carried = [...manifest.files.keys()].filter((rel) => keeps(orgOfFile(rel)));
    // A recycled tree holds files of the generation before last: each is kept
    // when it is the live file itself (same inode), else replaced; never written
    // into, as most of its files are hard links shared with the live tree.
    const rels = [...owners.keys(), ...carried];
    const folders = foldersOf(rels);
    const recycled = live !== null && (await recycleGeneration(store, live.id, gen));
    const present = recycled ? await prepareRecycled(gen, new Set(rels), folders) : null;
    await makeFolders(gen, folders, present?.dirs);
    // Every file call is a plain system call: on tmpfs or a warm page cache it
    // costs microseconds, where a promise per call through libuv's pool cost
    // more than the call (a third of a 10k build's main thread). Nothing is
    // open between two calls, so the open-file limit is never in play.
    /** Whether the recycled tree already holds inode `ino` at `rel`; whatever else is there is removed. */
    const keptOrCleared = (rel: string, ino?: number) => {
      if (!present?.files.has(rel)) return false;
      if (ino !== undefined && lstatSync(path.join(gen.tree, rel)).ino === ino) return true;
      unlinkSync(path.join(gen.tree, rel));
      return false;
    };
    // A hard link keeps the inode and mtime, so the live entry stays true.
    const placeLive = (rel: string, entry: FileEntry) => {
      if (!keptOrCleared(rel, entry[1])) linkSync(path.join(live!.tree, rel), path.join(gen.tree, rel));
      next.files.set(rel, entry);
    };
    const linkLive = (rel: string, orgId: string) => {
      placeLive(rel, liveEntry(rel)!);
      statsOf(orgId).unchanged++;
    };
    const writeNew = (rel: string, orgId: string, bytes: Buffer, hash: string) => {
      options.onWrite?.(rel, bytes);
      keptOrCleared(rel);
      // Exclusive: a file is only ever created, so bytes can never land in an inode the live tree shares.
      const fd = openSync(path.join(gen.tree, rel), "wx");
      let info;
      try {
        for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
        info = fstatSync(fd);
      } finally {
        closeSync(fd);
      }
      statsOf(orgId).written++;
      (manifest.files.has(rel) ? changes.changed : changes.added).push(apiPathOfFile(rel));
      next.files.set(rel, [hash, info.ino, info.mtimeMs, info.size]);
    };

    for (const o of outputs) {
      if (unchangedOutputs.has(o.rel)) linkLive(o.rel, o.orgId);
      else writeNew(o.rel, o.orgId, o.bytes, o.sha256);
    }
    let done = 0;
    for (const job of jobs) {
      if (job.reuse) {
        for (const rel of job.rels) linkLive(rel, job.orgId);
      } else {
        const body = job.post.body ?? options.loadBody(job.post);
        const files = renderPostFiles(job.orgId, job.post, body, job.plan.categories);
        postsRendered++;
        // By id and by slug are the same object: serialize and hash it once.
        const serialized = new Map<unknown, { bytes: Buffer; hash: string }>();
        for (const [i, file] of files.entries()) {
          const rel = job.rels[i]!;
          let done = serialized.get(file.json);
          if (!done) {
            const bytes = fileBytes(file.json);
            serialized.set(file.json, (done = { bytes, hash: sha256(bytes) }));
          }
          const { bytes, hash } = done;
          if (liveEntry(rel)?.[0] === hash) linkLive(rel, job.orgId);
          else writeNew(rel, job.orgId, bytes, hash);
        }
      }
      delete job.post.body;
      options.onProgress?.(++done, jobs.length);
      // A build inside `cdsnap dev` shares its thread with the server: let requests through now and then.
      if (done % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    for (const rel of carried) {
      const entry = liveEntry(rel);
      if (entry) placeLive(rel, entry);
      else keptOrCleared(rel);
    }

    for (const [orgId, json] of pages) {
      await writeFile(pagesFileOf(gen, orgId), json, { flag: "wx" });
      next.pages.set(orgId, sha256(json));
    }
    for (const [orgId, hash] of manifest.pages) {
      if (!keeps(orgId)) continue;
      await link(pagesFileOf(live!, orgId), pagesFileOf(gen, orgId));
      next.pages.set(orgId, hash);
    }
    const keyOf = new Map(jobs.map((job) => [job.post.file, job.key]));
    for (const [orgId, records] of options.records) {
      if (!planned.has(orgId)) continue;
      const byFile = postsOf(next, orgId);
      for (const { body: _body, ...record } of records) byFile.set(record.file, { ...record, key: keyOf.get(record.file) ?? "" });
    }
    for (const [orgId, byFile] of manifest.posts) if (keeps(orgId)) next.posts.set(orgId, byFile);

    const written = [...perOrg.values()].reduce((n, s) => n + s.written, 0);
    if (live && written === 0 && removedRels.length === 0 && !pagesChanged) {
      // Sources were touched but every byte came out the same: keep the live
      // tree. The unused generation stays, for the next build to recycle.
      return { generation: live.id, swapped: false, perOrg, changes: { added: [], changed: [], removed: [] }, postsRendered };
    }
    await writeJsonLines(manifestFileOf(gen), manifestLines(next));
    await options.beforeSwap?.(gen, { live, sha256Of: (rel) => next.files.get(rel)?.[0] });
    await swapTo(store, gen);
  } catch (error) {
    await rm(gen.dir, { recursive: true, force: true });
    throw error;
  }
  await pruneGenerations(store, live ? [gen.id, live.id] : [gen.id]);
  for (const list of Object.values(changes)) list.sort();
  return { generation: gen.id, swapped: true, perOrg, changes, postsRendered };
}

/** Every folder `rels` lie in, below the tree's root. */
function foldersOf(rels: readonly string[]): Set<string> {
  const folders = new Set<string>();
  for (const rel of rels) {
    for (let dir = path.dirname(rel); dir !== "." && !folders.has(dir); dir = path.dirname(dir)) folders.add(dir);
  }
  return folders;
}

/**
 * Readies a recycled tree for the next generation's files and folders: removes
 * every entry it does not have, and returns the files and folders left.
 */
async function prepareRecycled(
  gen: Generation,
  wanted: ReadonlySet<string>,
  wantedDirs: ReadonlySet<string>,
): Promise<{ files: Set<string>; dirs: Set<string> }> {
  let listing: Listing;
  try {
    listing = listTree(gen.tree);
  } catch {
    listing = { files: [], dirs: [], others: [] };
  }
  const unwantedDirs = listing.dirs.filter((dir) => !wantedDirs.has(dir));
  const unwantedFiles = [...listing.files.filter((rel) => !wanted.has(rel)), ...listing.others];
  await mapLimit(unwantedFiles, FILE_CONCURRENCY, (rel) => rm(path.join(gen.tree, rel), { force: true }));
  // Children before parents. A wanted folder's parents are all wanted, so nothing wanted goes with them.
  for (const dir of unwantedDirs.reverse()) await rm(path.join(gen.tree, dir), { recursive: true, force: true });
  return {
    files: new Set(listing.files.filter((rel) => wanted.has(rel))),
    dirs: new Set(listing.dirs.filter((dir) => wantedDirs.has(dir))),
  };
}

/** Creates the folders that are not there yet, parents before children, siblings in parallel. */
async function makeFolders(gen: Generation, folders: ReadonlySet<string>, existing?: ReadonlySet<string>): Promise<void> {
  const byDepth: string[][] = [];
  for (const dir of folders) if (!existing?.has(dir)) (byDepth[dir.split("/").length] ??= []).push(dir);
  await mkdir(path.join(gen.dir, "pages"), { recursive: true });
  await mkdir(gen.tree, { recursive: true });
  for (const level of byDepth) {
    if (level) await mapLimit(level, FILE_CONCURRENCY, (dir) => mkdir(path.join(gen.tree, dir)));
  }
}
