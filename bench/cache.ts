/**
 * Generated organizations are kept under `bench/.cache/<orgId>-<posts>-v1/`
 * (gitignored), so a rerun skips the minutes a 100k organization takes to
 * write. A folder is complete once its `org.json` exists: generation happens in
 * a temporary sibling that is renamed into place at the end.
 */
import Database from "better-sqlite3";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { migrate } from "../src/db/migrations.js";
import { generateOrg, type GeneratedOrg } from "./generate.js";
import { ROOT, progress } from "./measure.js";

/** Bump when the generator's output changes (words.ts, post.ts, org-db.ts). */
export const CACHE_VERSION = "v1";
const CACHE_DIR = path.join(ROOT, "bench", ".cache");
const MARKER = "org.json";

function withPaths(org: GeneratedOrg, dir: string): GeneratedOrg {
  return { ...org, db: path.join(dir, "cdsnap.db"), content: path.join(dir, "content") };
}

/** Returns the cached organization, generating it first when absent. */
export function ensureOrg(orgId: string, posts: number, seed: number): GeneratedOrg {
  const dir = path.join(CACHE_DIR, `${orgId}-${posts}-${CACHE_VERSION}`);
  const marker = path.join(dir, MARKER);
  if (existsSync(marker)) {
    const org = withPaths(JSON.parse(readFileSync(marker, "utf8")) as GeneratedOrg, dir);
    if (org.seed === seed) {
      // The project may have added migrations since the cache was written.
      const db = new Database(org.db);
      try {
        migrate(db);
      } finally {
        db.close();
      }
      progress(`using cached organization ${path.relative(ROOT, dir)}`);
      return org;
    }
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  const temp = path.join(CACHE_DIR, `.tmp-${orgId}-${posts}-${process.pid}`);
  rmSync(temp, { recursive: true, force: true });
  progress(`generating ${posts} posts into ${path.relative(ROOT, dir)} (once; cached afterwards)`);
  const started = Date.now();
  try {
    const org = generateOrg({ dir: temp, orgId, posts, seed });
    writeFileSync(path.join(temp, MARKER), `${JSON.stringify(org, null, 2)}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(temp, dir);
    progress(`generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return withPaths(org, dir);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
}
