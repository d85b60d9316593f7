/**
 * Writes the next generation beside the live one, as planned: new bytes into
 * new files, unchanged files hard-linked from the live tree (same inode, same
 * mtime, nothing rewritten), post files rendered one post at a time so bodies
 * and outputs are never all held at once. Nothing here touches the live tree.
 */
import { closeSync, fstatSync, linkSync, lstatSync, openSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { link, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { FILE_CONCURRENCY, mapLimit } from "../concurrency.js";
import type { PostRecord } from "../model/snapshot.js";
import { renderPostFiles } from "../render/render-org.js";
import type { FileEntry } from "./build-state.js";
import { fileBytes, sha256 } from "./file-bytes.js";
import { listTree, type Listing } from "./list-tree.js";
import { apiPathOfFile, orgOfFile, type GenerationPlan, type PostJob } from "./plan-generation.js";
import { generation, nextGenerationId, pagesFileOf, recycleGeneration, type Generation, type TreeStore } from "./tree-store.js";

/** Posts rendered between two turns of the event loop. */
const YIELD_EVERY = 256;

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

export interface WrittenGeneration {
  gen: Generation;
  /** Every file of the generation, with its hash and identity. */
  files: Map<string, FileEntry>;
  perOrg: Map<string, EmitStats>;
  changes: ChangedPaths;
  /** Posts rendered by this build (the others were unchanged and linked). */
  postsRendered: number;
  /** Every byte came out as the live tree has it: there is nothing to publish. */
  same: boolean;
}

export interface WriteOptions {
  /** A post's body, when the record no longer holds it. */
  loadBody: (post: PostRecord) => string;
  /** Sees the bytes of every file this build writes (the audit inspects them without reading back). */
  onWrite?: (rel: string, bytes: Buffer) => void;
  onProgress?: (done: number, total: number) => void;
}

/** Per organization, what a build that changes nothing keeps. */
export function statsOfUnchanged(plan: GenerationPlan): Map<string, EmitStats> {
  const perOrg = new Map<string, EmitStats>();
  const statsOf = statsIn(perOrg);
  for (const output of plan.outputs) statsOf(output.orgId).unchanged++;
  for (const job of plan.jobs) statsOf(job.orgId).unchanged += job.rels.length;
  return perOrg;
}

function statsIn(perOrg: Map<string, EmitStats>): (orgId: string) => EmitStats {
  return (orgId) => {
    let s = perOrg.get(orgId);
    if (!s) perOrg.set(orgId, (s = { written: 0, unchanged: 0, removed: 0 }));
    return s;
  };
}

/** A post's files as bytes: by id and by slug are the same object, serialized and hashed once into one buffer. */
function renderJob(job: PostJob, body: string): { rel: string; bytes: Buffer; sha256: string }[] {
  const files = renderPostFiles(job.orgId, job.post, body, job.plan.categories);
  const serialized = new Map<unknown, { bytes: Buffer; sha256: string }>();
  return files.map((file, i) => {
    let done = serialized.get(file.json);
    if (!done) {
      const bytes = fileBytes(file.json);
      serialized.set(file.json, (done = { bytes, sha256: sha256(bytes) }));
    }
    return { rel: job.rels[i]!, ...done };
  });
}

/**
 * Writes the generation. On any failure the half-written generation is removed
 * and the error thrown; the live tree is as it was.
 */
export async function writeGeneration(store: TreeStore, plan: GenerationPlan, options: WriteOptions): Promise<WrittenGeneration> {
  const { live, state } = plan.previous;
  const { liveEntry } = plan;
  const gen = generation(store, await nextGenerationId(store));
  const files = new Map<string, FileEntry>();
  const perOrg = new Map<string, EmitStats>();
  const statsOf = statsIn(perOrg);
  for (const orgId of new Set([...plan.outputs.map((o) => o.orgId), ...plan.jobs.map((j) => j.orgId)])) statsOf(orgId);
  const changes: ChangedPaths = { added: [], changed: [], removed: plan.removed.map(apiPathOfFile) };
  for (const rel of plan.removed) statsOf(orgOfFile(rel)).removed++;
  let postsRendered = 0;
  try {
    // A recycled tree holds files of the generation before last: each is kept
    // when it is the live file itself (same inode), else replaced; never written
    // into, as most of its files are hard links shared with the live tree.
    const rels = [...plan.outputs.map((o) => o.rel), ...plan.jobs.flatMap((j) => j.rels), ...plan.carried];
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
      files.set(rel, entry);
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
      (state.files.has(rel) ? changes.changed : changes.added).push(apiPathOfFile(rel));
      files.set(rel, [hash, info.ino, info.mtimeMs, info.size]);
    };

    for (const o of plan.outputs) {
      if (o.unchanged) linkLive(o.rel, o.orgId);
      else writeNew(o.rel, o.orgId, o.bytes, o.sha256);
    }
    let done = 0;
    for (const job of plan.jobs) {
      if (job.reuse) {
        for (const rel of job.rels) linkLive(rel, job.orgId);
      } else {
        postsRendered++;
        for (const file of renderJob(job, job.post.body ?? options.loadBody(job.post))) {
          if (liveEntry(file.rel)?.[0] === file.sha256) linkLive(file.rel, job.orgId);
          else writeNew(file.rel, job.orgId, file.bytes, file.sha256);
        }
      }
      delete job.post.body;
      options.onProgress?.(++done, plan.jobs.length);
      // A build inside `cdsnap dev` shares its thread with the server: let requests through now and then.
      if (done % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    for (const rel of plan.carried) {
      const entry = liveEntry(rel);
      if (entry) placeLive(rel, entry);
      else keptOrCleared(rel);
    }

    for (const [orgId, json] of plan.pages) writeFileSync(pagesFileOf(gen, orgId), json, { flag: "wx" });
    for (const orgId of state.pages.keys()) if (plan.keeps(orgId)) await link(pagesFileOf(live!, orgId), pagesFileOf(gen, orgId));
  } catch (error) {
    await discardGeneration(gen);
    throw error;
  }
  const written = [...perOrg.values()].reduce((n, s) => n + s.written, 0);
  const same = live !== null && written === 0 && plan.removed.length === 0 && !plan.pagesChanged;
  for (const list of Object.values(changes)) list.sort();
  return { gen, files, perOrg, changes, postsRendered, same };
}

/** Removes a generation that will not be published. */
export async function discardGeneration(gen: Generation): Promise<void> {
  await rm(gen.dir, { recursive: true, force: true });
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
