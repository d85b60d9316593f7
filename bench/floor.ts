/**
 * The floor: `node dist/bench/floor.js <plan.json> <out dir>` reads every source
 * file once and writes every output file once (same count, same sizes as the
 * real build's tree, bytes taken from what it read), the way the simplest and
 * fastest plain node script would: one thread, synchronous calls, one
 * `mkdirSync` per folder, one `readFileSync` per source, one `writeFileSync` per
 * output. No parsing, no validation, no hashing: the I/O a build cannot avoid,
 * measured on the same machine and filesystem in the same run.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { FloorPlan } from "./floor-plan.js";

/** Every folder the outputs need, each parent before its children (a parent's path is a prefix, so it sorts first). */
function foldersOf(outputs: FloorPlan["outputs"]): string[] {
  const folders = new Set<string>();
  for (const [rel] of outputs) {
    for (let dir = path.posix.dirname(rel); dir !== "." && !folders.has(dir); dir = path.posix.dirname(dir)) folders.add(dir);
  }
  return [...folders].sort();
}

function main(planFile: string, outDir: string): void {
  const plan = JSON.parse(readFileSync(planFile, "utf8")) as FloorPlan;
  const { sources, outputs } = plan;
  mkdirSync(outDir, { recursive: true });
  for (const folder of foldersOf(outputs)) mkdirSync(path.join(outDir, folder));

  // Output j is cut from source floor(j * S / N): every source is read once, every output written once.
  const firstOutput = (s: number) => Math.ceil((s * outputs.length) / sources.length);
  let written = 0;
  for (let s = 0; s < sources.length; s++) {
    const bytes = readFileSync(sources[s]!);
    for (let j = firstOutput(s); j < firstOutput(s + 1); j++) {
      const [rel, size] = outputs[j]!;
      const data = bytes.length >= size ? bytes.subarray(0, size) : Buffer.alloc(size, bytes.length > 0 ? bytes : " ");
      writeFileSync(path.join(outDir, rel), data);
      written++;
    }
  }
  if (written !== outputs.length) throw new Error(`wrote ${written} of ${outputs.length} files`);
  process.stdout.write(`${JSON.stringify({ read: sources.length, written })}\n`);
}

const [planFile, outDir] = process.argv.slice(2);
if (!planFile || !outDir) {
  process.stderr.write("usage: node dist/bench/floor.js <plan.json> <out dir>\n");
  process.exitCode = 2;
} else {
  main(planFile, outDir);
}
