/**
 * The one writer of a generation's tree. Nothing here touches the live tree.
 *
 * With a trusted state the next generation starts as a copy of the live tree
 * made of hard links (same inodes, same mtimes: a sync or CDN sees nothing to
 * do), and only what this build changes is written into it: the generation
 * the live one was made from is taken and brought level with the live tree by
 * replaying what the live one's build changed (recorded in the state), so a
 * rebuild costs what changed, never a listing or an `lstat` of the tree. That
 * copy is made only once a byte differs: a build that changes nothing writes
 * nothing. Without a trusted state (the first build, a damaged state,
 * `--verify`) the tree is made from nothing, every file linked from the live
 * tree when its bytes are the same, else written.
 *
 * Post files are rendered one post at a time, so bodies and outputs are never
 * all held at once.
 */
import { linkSync, mkdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import type { Publication } from "../model/shapes.js";
import type { ItemsParts } from "../render/pages.js";
import { recordJsonOf, recordOf, type PostRecord } from "../model/snapshot.js";
import type { Inspected } from "../audit/audit-tree.js";
import { createInspector } from "../audit/inspector.js";
import type { SecretNeedle } from "../audit/scan-secrets.js";
import type { FileEntry } from "./build-state.js";
import { sameEntry, type GenerationFiles } from "./file-table.js";
import { renderInParallel, renderWorkers, type FileOutcome, type RenderJobInput, type RenderSetup } from "./render-pool.js";
import { createFile, inFolder, linkInto, postFileBytes, removeFile } from "./tree-files.js";
import { apiPathOfFile, orgOfFile, POST_FILES, proxyFileOf, type GenerationPlan, type PostJob, type RenderJob } from "./plan-generation.js";
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

interface WriteCommon {
  perOrg: Map<string, EmitStats>;
  /** Posts rendered by this build (the others were unchanged). */
  postsRendered: number;
}

/** Every byte is as the live tree has it: no generation was made. */
export interface Unchanged extends WriteCommon {
  kind: "unchanged";
}

export interface WrittenGeneration extends WriteCommon {
  kind: "written";
  gen: Generation;
  /** Every file of the generation, with its hash and identity. */
  files: GenerationFiles;
  /** The files this build wrote (true) and removed (false), against the live tree: what the next build replays. */
  replay: Map<string, boolean>;
  /** Of the files written, those that replaced a live file (the others were added). */
  replaced: ReadonlySet<string>;
  /** The audit's per-file checks of every file written, on the bytes as they were written. */
  inspected: Map<string, Inspected>;
}

export type WriteResult = Unchanged | WrittenGeneration;

/** What each written file is inspected against for the audit, here or in a render worker. */
export interface Inspection {
  needles: SecretNeedle[];
  orgIds: ReadonlySet<string>;
  /** Which tree's shapes the files are held to. */
  publication: Publication;
}

export interface WriteOptions {
  /** A post's body, when the record no longer holds it. */
  loadBody: (post: PostRecord) => string;
  /** Where the posts are (a render worker reads a body the record let go). */
  contentDir: string;
  /** Every file written is inspected on its bytes, so the audit need not read them back. */
  inspection: Inspection;
  onProgress?: (done: number, total: number) => void;
  /** Make a generation even when no byte changes (the live tree must be audited again and republished). */
  force?: boolean;
}

/** Shares one string per value among the strings handed to it. */
interface StringSharing {
  share: (value: string) => string;
  /** Shares every string inside `object` (an object or an array, nested), in place. */
  shareIn: (object: object) => void;
}

const NO_SHARING: StringSharing = { share: (value) => value, shareIn: () => undefined };

/**
 * The strings of one post's written files, shared: each file's entry and
 * audit facts are held until the build ends, and they repeat a few values (a
 * hash is the entry's, its facts', its twin path's; the id, slug, path and
 * organization), which arrive from a render worker each as a copy of its own.
 * `seed` are the strings the build already holds.
 */
function stringSharing(seed: readonly string[]): StringSharing {
  const seen = new Map<string, string>(seed.map((s) => [s, s]));
  const share = (value: string): string => {
    const known = seen.get(value);
    if (known !== undefined) return known;
    seen.set(value, value);
    return value;
  };
  const shareIn = (object: object): void => {
    const fields = object as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      const value = fields[key];
      if (typeof value === "string") fields[key] = share(value);
      else if (value !== null && typeof value === "object") shareIn(value);
    }
  };
  return { share, shareIn };
}

const sharingOf = (job: RenderJob) => stringSharing([job.orgId, job.post.meta.id, job.post.meta.slug, ...job.rels]);

function statsIn(perOrg: Map<string, EmitStats>): (orgId: string) => EmitStats {
  return (orgId) => {
    let s = perOrg.get(orgId);
    if (!s) perOrg.set(orgId, (s = { written: 0, unchanged: 0, removed: 0 }));
    return s;
  };
}

/**
 * Makes the next generation's tree as a copy of the live one (trusted state):
 * from the generation the live one was made from, by replaying the live
 * build's changes and the write proxy's files; from nothing, by linking every
 * live file, when that generation is gone.
 */
async function levelWithLive(store: TreeStore, plan: GenerationPlan, gen: Generation): Promise<void> {
  const { live, state } = plan.previous;
  const liveFile = (rel: string) => path.join(live!.tree, rel);
  const taken = state.base !== null && (await recycleGeneration(store, state.base, gen));
  mkdirSync(gen.tree, { recursive: true });
  if (taken) {
    state.eachChange((rel, written) => {
      if (written) linkInto(gen.tree, liveFile(rel), rel, true);
      else removeFile(gen.tree, rel);
    });
    // Replaced between builds by the write proxy, whose writes no build recorded.
    for (const orgId of state.pages.keys()) {
      const rel = proxyFileOf(orgId);
      if (state.files.get(rel)) linkInto(gen.tree, liveFile(rel), rel, true);
    }
  } else {
    // Row by row: a first rebuild after a full build has no base, and its tree has every post's files.
    state.files.eachRel((rel) => inFolder(path.join(gen.tree, rel), () => linkSync(liveFile(rel), path.join(gen.tree, rel))));
  }
}

/**
 * Writes the generation, or nothing when every byte is the live tree's. On any
 * failure the half-written generation is removed and the error thrown; the
 * live tree is as it was.
 */
export async function writeGeneration(store: TreeStore, plan: GenerationPlan, options: WriteOptions): Promise<WriteResult> {
  const { live, state, trusted } = plan.previous;
  const { liveEntry } = plan;
  const perOrg = new Map<string, EmitStats>();
  const statsOf = statsIn(perOrg);
  for (const orgId of new Set([...plan.outputs.map((o) => o.orgId), ...plan.jobs.map((j) => j.orgId)])) statsOf(orgId);
  // The entries this build placed: with a trusted state, only those that differ from the state's (the
  // generation's whole list is the state's with these laid over it, made only when there is a generation).
  const placed = new Map<string, FileEntry>();
  const place = (rel: string, entry: FileEntry) => {
    if (!trusted || !sameEntry(entry, state.files.get(rel))) placed.set(rel, entry);
  };
  const replay = new Map<string, boolean>();
  const inspected = new Map<string, Inspected>();
  // What the live tree's audit found, where this code made that tree: a rewritten list is checked for its new items.
  const recorded = (rel: string) =>
    trusted && state.orgs.get(orgOfFile(rel))?.code === plan.codeVersion ? state.auditAt([rel]).get(rel)?.facts : undefined;
  const inspect = createInspector(options.inspection.orgIds, options.inspection.needles, options.inspection.publication, recorded);
  const replaced = new Set<string>();
  for (const rel of plan.removed) statsOf(orgOfFile(rel)).removed++;
  let postsRendered = 0;
  let gen: Generation | null = null;
  const opened = async (): Promise<Generation> => {
    if (gen) return gen;
    gen = generation(store, await nextGenerationId(store));
    if (trusted) await levelWithLive(store, plan, gen);
    else mkdirSync(gen.tree, { recursive: true });
    return gen;
  };

  try {
    // Made at once when it cannot start as the live tree's copy: every file is placed one by one.
    if (!trusted || options.force || plan.removed.length > 0 || plan.pagesChanged) await opened();
    // Trusted, the tree already holds the live file; else it is linked in.
    const keep = (rel: string, orgId: string) => {
      if (!trusted) linkInto(gen!.tree, path.join(live!.tree, rel), rel, false);
      place(rel, liveEntry(rel)!);
      statsOf(orgId).unchanged++;
    };
    const recordWritten = (rel: string, orgId: string, entry: FileEntry) => {
      placed.set(rel, entry);
      replay.set(rel, true);
      statsOf(orgId).written++;
      if (liveEntry(rel)) replaced.add(rel);
    };
    const write = async (rel: string, orgId: string, bytes: Buffer, hash: string, strings: StringSharing, parts?: ItemsParts) => {
      const tree = (await opened()).tree;
      const found = inspect(rel, bytes, parts);
      strings.shareIn(found);
      inspected.set(rel, found);
      // Only a copy of the live tree has a file there already.
      recordWritten(rel, orgId, [strings.share(hash), ...createFile(tree, rel, bytes, trusted)]);
    };
    const keepOrWrite = async (rel: string, orgId: string, bytes: Buffer, hash: string, strings = NO_SHARING) => {
      if (liveEntry(rel)?.[0] === hash) keep(rel, orgId);
      else await write(rel, orgId, bytes, hash, strings);
    };

    for (const o of plan.outputs) {
      if (o.unchanged) keep(o.rel, o.orgId);
      else await write(o.rel, o.orgId, o.bytes(), o.sha256, NO_SHARING, o.parts);
    }
    let done = 0;
    const finished = (job: PostJob) => {
      if (!job.reuse) delete job.post.body;
      options.onProgress?.(++done, plan.jobs.length);
    };
    // Unchanged posts are planned under a trusted state only: the copy of the live tree holds their files.
    for (const job of plan.jobs) {
      if (!job.reuse) continue;
      statsOf(job.orgId).unchanged += POST_FILES;
      finished(job);
    }
    const toRender = plan.jobs.filter((job): job is RenderJob => !job.reuse);
    postsRendered = toRender.length;
    const renderHere = async (job: RenderJob) => {
      const strings = sharingOf(job);
      const post = recordOf(job.post);
      const body = post.body ?? options.loadBody(post);
      for (const file of postFileBytes(job.orgId, post, body, job.plan.categories, job.plan.shows(job.post))) {
        await keepOrWrite(strings.share(file.rel), job.orgId, file.bytes, file.sha256, strings);
      }
      finished(job);
    };
    const pool = renderWorkers(toRender.length);
    if (pool) {
      const { inspection } = options;
      const setup: RenderSetup = {
        tree: (await opened()).tree,
        contentDir: options.contentDir,
        linkFrom: trusted ? null : (live?.tree ?? null),
        replace: trusted,
        orgIds: [...inspection.orgIds],
        needles: inspection.needles,
        publication: inspection.publication,
      };
      const input = (job: RenderJob): RenderJobInput => ({
        orgId: job.orgId,
        record: recordJsonOf(job.post),
        beside: { fingerprint: job.post.fingerprint, sha256: job.post.sha256, body: job.post.body },
        categories: [...job.plan.categories],
        status: job.plan.shows(job.post),
        live: job.rels.flatMap((rel): [string, string][] => {
          const entry = liveEntry(rel);
          return entry ? [[rel, entry[0]]] : [];
        }),
      });
      const apply = (job: RenderJob, outcomes: FileOutcome[]) => {
        const strings = sharingOf(job);
        for (const outcome of outcomes) {
          const rel = strings.share(outcome.rel);
          if (outcome.kept) {
            place(rel, liveEntry(rel)!);
            statsOf(job.orgId).unchanged++;
            continue;
          }
          strings.shareIn(outcome.inspected);
          inspected.set(rel, outcome.inspected);
          recordWritten(rel, job.orgId, [strings.share(outcome.sha256), outcome.ino, outcome.mtimeMs, outcome.size]);
        }
        finished(job);
      };
      await renderInParallel(toRender, pool, setup, input, renderHere, apply);
    } else {
      for (const job of toRender) {
        await renderHere(job);
        // A build inside `cdsnap dev` shares its thread with the server: let requests through now and then.
        if (done % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    }
    // The files of a planned organization's kept part are among its unchanged ones.
    for (const [orgId, count] of plan.keptFiles) statsOf(orgId).unchanged += count;
    if (gen === null) return { kind: "unchanged", perOrg, postsRendered };
    const tree = (gen as Generation).tree;
    for (const rel of plan.carried) {
      const entry = liveEntry(rel);
      if (!entry) continue;
      linkInto(tree, path.join(live!.tree, rel), rel, false);
      place(rel, entry);
    }
    const removed = new Set(plan.removed);
    if (trusted) {
      // The copy holds the live organization files, which the write proxy replaces between builds: those the build
      // did not render are looked at (liveEntry), so their entries are those of the bytes they hold.
      const rendered = new Set(plan.outputs.map((o) => o.rel));
      for (const orgId of state.pages.keys()) {
        const rel = proxyFileOf(orgId);
        const entry = rendered.has(rel) || removed.has(rel) ? undefined : liveEntry(rel);
        if (entry) place(rel, entry);
      }
    }
    for (const rel of plan.removed) {
      if (trusted) removeFile(tree, rel);
      placed.delete(rel);
      replay.set(rel, false);
    }
    const files: GenerationFiles = { base: trusted ? state.files : null, placed, removed };
    const next = gen as Generation;
    mkdirSync(path.join(next.dir, "pages"), { recursive: true });
    for (const [orgId, json] of plan.pages) writeFileSync(pagesFileOf(next, orgId), json, { flag: "wx" });
    for (const orgId of state.pages.keys()) if (plan.keepsPages(orgId)) linkSync(pagesFileOf(live!, orgId), pagesFileOf(next, orgId));
    const writtenCount = [...perOrg.values()].reduce((n, s) => n + s.written, 0);
    if (!trusted && live !== null && writtenCount === 0 && plan.removed.length === 0 && !plan.pagesChanged && !options.force) {
      await discardGeneration(next);
      return { kind: "unchanged", perOrg, postsRendered };
    }
    return { kind: "written", gen: next, files, perOrg, replay, replaced, inspected, postsRendered };
  } catch (error) {
    if (gen) await discardGeneration(gen);
    throw error;
  }
}

/**
 * The API paths a written generation added, changed and removed, sorted: made
 * when asked (the build's report, its tags, the on-change hook), so that a full
 * build does not hold a path string for every file through its audit and publish.
 */
export function changedPathsOf(written: Pick<WrittenGeneration, "replay" | "replaced">): ChangedPaths {
  const changes: ChangedPaths = { added: [], changed: [], removed: [] };
  for (const [rel, wrote] of written.replay) {
    const list = !wrote ? changes.removed : written.replaced.has(rel) ? changes.changed : changes.added;
    list.push(apiPathOfFile(rel));
  }
  for (const list of Object.values(changes)) list.sort();
  return changes;
}

/** Removes a generation that will not be published. */
export async function discardGeneration(gen: Generation): Promise<void> {
  await rm(gen.dir, { recursive: true, force: true });
}
