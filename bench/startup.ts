/**
 * Start-up: `node <cli> --help` against `node -e 0`, the cost of a bare node
 * process on this machine. Every build and rebuild pays the CLI's start-up, so
 * a rebuild target below it cannot be met whatever the build does.
 */
import { CLI, median, progress, settleDisk, timeNode } from "./measure.js";

export interface StartupResult {
  /** Median wall time of `node <cli> --help`, ms. */
  cliMs: number;
  /** Median wall time of `node -e 0`, ms. */
  nodeMs: number;
  /** Runs of each. */
  runs: number;
}

export async function measureStartup(runs: number): Promise<StartupResult> {
  const cli = [CLI, "--help"];
  const bare = ["-e", "0"];
  settleDisk();
  // Untimed: the first run of each reads its files from the disk.
  await timeNode(cli);
  await timeNode(bare);
  const cliMs: number[] = [];
  const nodeMs: number[] = [];
  // Alternating, each going first every other turn: a burst of other work on
  // the machine falls on both.
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      cliMs.push(await timeNode(cli));
      nodeMs.push(await timeNode(bare));
    } else {
      nodeMs.push(await timeNode(bare));
      cliMs.push(await timeNode(cli));
    }
  }
  const result = { cliMs: median(cliMs), nodeMs: median(nodeMs), runs };
  progress(`  cdsnap --help ${result.cliMs.toFixed(0)} ms, node -e 0 ${result.nodeMs.toFixed(0)} ms (medians of ${runs})`);
  return result;
}
