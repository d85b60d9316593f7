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

async function walk(root: string, visit: (rel: string, size: number) => void, rel = ""): Promise<void> {
  for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
    const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) await walk(root, visit, child);
    else if (entry.isFile()) visit(child, (await stat(path.join(root, child))).size);
  }
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
