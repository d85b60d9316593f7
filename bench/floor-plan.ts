/**
 * The plan of the floor measurement: every source file the build reads, and
 * every file the real build wrote (relative path and size), taken from the
 * built tree so that the floor writes the same count and the same bytes.
 */
import { readdir, realpath, stat, writeFile } from "node:fs/promises";
import path from "node:path";

export interface FloorPlan {
  sources: string[];
  /** [path relative to the output folder, size in bytes] */
  outputs: [string, number][];
}

const STAT_BATCH = 256;

async function walk(root: string, visit: (rel: string, size: number) => void, rel = ""): Promise<void> {
  const entries = await readdir(path.join(root, rel), { withFileTypes: true });
  const childOf = (name: string) => (rel === "" ? name : `${rel}/${name}`);
  const files = entries.filter((e) => e.isFile()).map((e) => childOf(e.name));
  // Stats in batches: a 100k-post tree has 100k entries in one folder.
  for (let i = 0; i < files.length; i += STAT_BATCH) {
    const batch = files.slice(i, i + STAT_BATCH);
    const sizes = await Promise.all(batch.map(async (file) => (await stat(path.join(root, file))).size));
    batch.forEach((file, j) => visit(file, sizes[j]!));
  }
  for (const entry of entries) if (entry.isDirectory()) await walk(root, visit, childOf(entry.name));
}

/** Walks the sources and the live tree behind `out` (a link to the generation). */
export async function makeFloorPlan(content: string, db: string, out: string): Promise<FloorPlan> {
  const sources: string[] = [db];
  await walk(content, (rel) => {
    if (rel.endsWith(".md")) sources.push(path.join(content, rel));
  });
  const outputs: [string, number][] = [];
  await walk(await realpath(out), (rel, size) => outputs.push([rel, size]));
  return { sources, outputs };
}

export async function writeFloorPlan(file: string, plan: FloorPlan): Promise<void> {
  await writeFile(file, JSON.stringify(plan));
}

export function totalBytes(plan: FloorPlan): number {
  return plan.outputs.reduce((sum, [, size]) => sum + size, 0);
}
