/**
 * The floor: `node dist/bench/floor.js <plan.json> <out dir>` reads every source
 * file once and writes every output file once (same count, same sizes as the
 * real build's tree, bytes taken from what it read), with as many files in
 * flight as the build allows itself. No parsing, no validation, no hashing:
 * the I/O a build cannot avoid, measured on the same machine in the same run.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { FloorPlan } from "./floor-plan.js";

const IN_FLIGHT = 64;

async function main(planFile: string, outDir: string): Promise<void> {
  const plan = JSON.parse(readFileSync(planFile, "utf8")) as FloorPlan;
  const { sources, outputs } = plan;
  const folders = [...new Set(outputs.map(([rel]) => path.dirname(rel)))].sort();
  for (const folder of folders) await mkdir(path.join(outDir, folder), { recursive: true });

  // Output j is cut from source floor(j * S / N): every source is read once, by one worker.
  const firstOutput = (s: number) => Math.ceil((s * outputs.length) / sources.length);
  let next = 0;
  let written = 0;
  async function worker(): Promise<void> {
    while (next < sources.length) {
      const s = next++;
      const bytes = await readFile(sources[s]!);
      for (let j = firstOutput(s); j < firstOutput(s + 1); j++) {
        const [rel, size] = outputs[j]!;
        const data = bytes.length >= size ? bytes.subarray(0, size) : Buffer.alloc(size, bytes.length > 0 ? bytes : " ");
        await writeFile(path.join(outDir, rel), data);
        written++;
      }
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  if (written !== outputs.length) throw new Error(`wrote ${written} of ${outputs.length} files`);
  process.stdout.write(`${JSON.stringify({ read: sources.length, written })}\n`);
}

const [planFile, outDir] = process.argv.slice(2);
if (!planFile || !outDir) {
  process.stderr.write("usage: node dist/bench/floor.js <plan.json> <out dir>\n");
  process.exitCode = 2;
} else {
  await main(planFile, outDir);
}
