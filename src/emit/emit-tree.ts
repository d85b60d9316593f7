/**
 * Turns rendered organizations into the next generation of the tree. Files
 * whose bytes did not change are hard-linked from the live generation (same
 * inode, same mtime, nothing rewritten); only changed files are written; a build
 * that changes nothing writes nothing and keeps the live generation.
 */
import { createHash } from "node:crypto";
import { link, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileOf, parseApiPath } from "../api-paths.js";
import { FILE_CONCURRENCY, mapLimit } from "../concurrency.js";
import type { PageMembership } from "../render/blocks.js";
import { canonicalJson } from "../render/canonical-json.js";
import type { RenderedOrg } from "../render/render-org.js";
import {
  generation,
  liveGeneration,
  manifestFileOf,
  nextGenerationId,
  pagesFileOf,
  pruneGenerations,
  swapTo,
  type Generation,
  type TreeStore,
} from "./tree-store.js";

interface ManifestEntry {
  orgId: string;
  sha256: string;
  size: number;
  mtimeMs: number;
  ino: number;
}

interface Manifest {
  files: Record<string, ManifestEntry>;
  pages: Record<string, string>;
}

export interface EmitStats {
  written: number;
  unchanged: number;
  removed: number;
}

export interface EmitResult {
  generation: string | null;
  swapped: boolean;
  perOrg: Map<string, EmitStats>;
}

export function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The bytes of a tree file: canonical JSON, so equal data is equal bytes. */
export function fileBytes(json: unknown): Buffer {
  return Buffer.from(canonicalJson(json), "utf8");
}

export async function readManifest(gen: Generation): Promise<Manifest> {
  try {
    return JSON.parse(await readFile(manifestFileOf(gen), "utf8")) as Manifest;
  } catch {
    return { files: {}, pages: {} };
  }
}

/** Reads the D8 membership the build wrote for an organization. */
export async function readPages(gen: Generation, orgId: string): Promise<PageMembership | null> {
  try {
    return JSON.parse(await readFile(pagesFileOf(gen, orgId), "utf8")) as PageMembership;
  } catch {
    return null;
  }
}

/**
 * The hash of a live file. The manifest's hash is trusted only while the file is
 * the one the build wrote (same inode, size, mtime): the write proxy replaces
 * organization files between builds, and then the bytes are hashed afresh.
 */
async function liveHash(live: Generation, rel: string, entry: ManifestEntry | undefined): Promise<string | null> {
  const file = path.join(live.tree, rel);
  try {
    const info = await stat(file);
    if (entry && info.ino === entry.ino && info.size === entry.size && info.mtimeMs === entry.mtimeMs) {
      return entry.sha256;
    }
    return sha256(await readFile(file));
  } catch {
    return null;
  }
}

interface Planned {
  rel: string;
  orgId: string;
  bytes: Buffer;
  sha256: string;
  unchanged: boolean;
}

function orgOfFile(rel: string): string {
  const route = parseApiPath(`/${rel.slice(0, -".json".length)}`);
  if (!route) throw new Error(`manifest names a file no API path maps to: ${rel}`);
  return route.orgId;
}

/**
 * Writes `rendered` as the next generation and swaps it in. With `carryOver`,
 * every organization not rendered keeps its live files and membership exactly
 * (`--org` rebuilds); without it, organizations not rendered disappear.
 */
export interface EmitOptions {
  /** Keep organizations not rendered exactly as they are (`--org` rebuilds). */
  carryOver: boolean;
  /** Runs on the complete next generation before it goes live; a throw cancels the swap. */
  beforeSwap?: (gen: Generation) => Promise<void>;
}

export async function emitTree(store: TreeStore, rendered: readonly RenderedOrg[], options: EmitOptions): Promise<EmitResult> {
  const { carryOver } = options;
  const live = await liveGeneration(store);
  const manifest: Manifest = live ? await readManifest(live) : { files: {}, pages: {} };
  const perOrg = new Map<string, EmitStats>();
  const statsOf = (orgId: string) => {
    let s = perOrg.get(orgId);
    if (!s) perOrg.set(orgId, (s = { written: 0, unchanged: 0, removed: 0 }));
    return s;
  };

  const planned: Planned[] = [];
  const owners = new Map<string, string>();
  for (const org of rendered) {
    statsOf(org.orgId);
    for (const file of org.files) {
      const route = parseApiPath(file.path);
      if (!route) throw new Error(`rendered a path the interface does not describe: ${file.path}`);
      const rel = fileOf(route);
      const previous = owners.get(rel);
      if (previous !== undefined) throw new Error(`two outputs claim ${file.path} (organization ${previous} and ${org.orgId})`);
      owners.set(rel, org.orgId);
      const bytes = fileBytes(file.json);
      planned.push({ rel, orgId: org.orgId, bytes, sha256: sha256(bytes), unchanged: false });
    }
  }
  const renderedIds = new Set(rendered.map((o) => o.orgId));

  if (live) {
    await mapLimit(planned, FILE_CONCURRENCY, async (p) => {
      p.unchanged = (await liveHash(live, p.rel, manifest.files[p.rel])) === p.sha256;
    });
  }
  const carried = Object.entries(manifest.files).filter(([, e]) => carryOver && !renderedIds.has(e.orgId));
  const removed = Object.entries(manifest.files).filter(
    ([rel, e]) => (!carryOver || renderedIds.has(e.orgId)) && !owners.has(rel),
  );
  for (const [, e] of removed) statsOf(e.orgId).removed++;

  const pages = new Map<string, string>();
  for (const org of rendered) pages.set(org.orgId, canonicalJson(org.pages));
  const pagesChanged =
    [...pages].some(([orgId, json]) => manifest.pages[orgId] !== sha256(json)) ||
    Object.keys(manifest.pages).some((orgId) => !pages.has(orgId) && !(carryOver && !renderedIds.has(orgId)));

  for (const p of planned) statsOf(p.orgId)[p.unchanged ? "unchanged" : "written"]++;
  const changed = planned.some((p) => !p.unchanged) || removed.length > 0 || pagesChanged;
  if (live && !changed) return { generation: live.id, swapped: false, perOrg };

  const gen = generation(store, await nextGenerationId(store));
  try {
    const next = await writeGeneration(gen, live, planned, carried, pages, manifest, carryOver ? renderedIds : null);
    await writeFile(manifestFileOf(gen), JSON.stringify(next));
    await options.beforeSwap?.(gen);
    await swapTo(store, gen);
  } catch (error) {
    await rm(gen.dir, { recursive: true, force: true });
    throw error;
  }
  await pruneGenerations(store, live ? [gen.id, live.id] : [gen.id]);
  return { generation: gen.id, swapped: true, perOrg };
}

async function writeGeneration(
  gen: Generation,
  live: Generation | null,
  planned: readonly Planned[],
  carried: readonly [string, ManifestEntry][],
  pages: ReadonlyMap<string, string>,
  previous: Manifest,
  rebuiltOnly: ReadonlySet<string> | null,
): Promise<Manifest> {
  const next: Manifest = { files: {}, pages: {} };
  const dirs = new Set<string>([path.join(gen.dir, "pages")]);
  for (const rel of [...planned.map((p) => p.rel), ...carried.map(([rel]) => rel)]) {
    dirs.add(path.dirname(path.join(gen.tree, rel)));
  }
  for (const dir of [...dirs].sort()) await mkdir(dir, { recursive: true });

  await mapLimit(planned, FILE_CONCURRENCY, async (p) => {
    const target = path.join(gen.tree, p.rel);
    if (p.unchanged && live) {
      await link(path.join(live.tree, p.rel), target);
    } else {
      await writeFile(target, p.bytes);
    }
    const info = await stat(target);
    next.files[p.rel] = { orgId: p.orgId, sha256: p.sha256, size: info.size, mtimeMs: info.mtimeMs, ino: info.ino };
  });
  await mapLimit(carried, FILE_CONCURRENCY, async ([rel, entry]) => {
    const target = path.join(gen.tree, rel);
    await link(path.join(live!.tree, rel), target);
    const info = await stat(target);
    // Re-hash only if the proxy replaced the file since the manifest was written.
    const same = info.ino === entry.ino && info.size === entry.size && info.mtimeMs === entry.mtimeMs;
    const hash = same ? entry.sha256 : sha256(await readFile(target));
    next.files[rel] = { orgId: orgOfFile(rel), sha256: hash, size: info.size, mtimeMs: info.mtimeMs, ino: info.ino };
  });

  for (const [orgId, json] of pages) {
    await writeFile(pagesFileOf(gen, orgId), json);
    next.pages[orgId] = sha256(json);
  }
  if (rebuiltOnly && live) {
    for (const [orgId, hash] of Object.entries(previous.pages)) {
      if (rebuiltOnly.has(orgId)) continue;
      await link(pagesFileOf(live, orgId), pagesFileOf(gen, orgId));
      next.pages[orgId] = hash;
    }
  }
  return next;
}
