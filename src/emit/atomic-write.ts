import { randomBytes } from "node:crypto";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

function tempNameFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
}

/**
 * Writes a file so that readers see the old bytes or the new, never a mix: the
 * bytes go to a temporary file beside the target (same filesystem), which is
 * then renamed over it. The temporary file is removed if anything fails.
 * Synchronous: its callers hold a SQLite lock and must not yield.
 */
export function writeFileAtomicSync(target: string, data: string | Buffer): void {
  const temp = tempNameFor(target);
  try {
    writeFileSync(temp, data);
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
