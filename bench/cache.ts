/**
 * Generated organizations are kept under `bench/.cache/<orgId>-<posts>-v1/`
 * and `bench/.cache/orgs-<orgs>x<posts>-<blocks>b-v1/` (gitignored), so a rerun
 * skips the minutes a 100k organization takes to write. A folder is complete
 * once its `org.json` exists: generation happens in a temporary sibling that
 * is renamed into place at the end.
 */
import Database from "better-sqlite3";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { migrate } from "../src/db/migrations.js";
import { generateOrg, generateOrgs, type GeneratedOrg, type GeneratedOrgs } from "./generate.js";
import { ROOT, progress } from "./measure.js";

/** Bump when the generator's output changes (words.ts, post.ts, org-db.ts). */
export const CACHE_VERSION = "v1";
const CACHE_DIR = path.join(ROOT, "bench", ".cache");
const MARKER = "org.json";

interface Generated {
  seed: number;
  db: string;
  content: string;
}

/** The paths in org.json are where it was generated: the folder it sits in now is what counts. */
function withPaths<T extends Generated>(org: T, dir: string): T {
  return { ...org, db: path.join(dir, "cdsnap.db"), content: path.join(dir, "content") };
}

/** Returns the cached corpus `name`, generating it first (into a temporary sibling) when absent. */
function ensureCached<T extends Generated>(name: string, seed: number, what: string, generate: (dir: string) => T): T {
  const dir = path.join(CACHE_DIR, `${name}-${CACHE_VERSION}`);
  const marker = path.join(dir, MARKER);
  if (existsSync(marker)) {
    const org = withPaths(JSON.parse(readFileSync(marker, "utf8")) as T, dir);
    if (org.seed === seed) {
      // The project may have added migrations since the cache was written.
      const db = new Database(org.db);
      try {
        migrate(db);
      } finally {
        db.close();
      }
      progress(`using cached ${what} ${path.relative(ROOT, dir)}`);
      return org;
    }
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  const temp = path.join(CACHE_DIR, `.tmp-${name}-${process.pid}`);
  rmSync(temp, { recursive: true, force: true });
  progress(`generating ${what} into ${path.relative(ROOT, dir)} (once; cached afterwards)`);
  const started = Date.now();
  try {
    const org = generate(temp);
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

/** Returns the cached organization, generating it first when absent. */
export function ensureOrg(orgId: string, posts: number, seed: number): GeneratedOrg {
  return ensureCached(`${orgId}-${posts}`, seed, `organization of ${posts} posts`, (dir) => generateOrg({ dir, orgId, posts, seed }));
}

/** Returns the cached many-organizations corpus (one database), generating it first when absent. */
export function ensureOrgs(orgs: number, postsPerOrg: number, blocksPerOrg: number, seed: number): GeneratedOrgs {
  return ensureCached(`orgs-${orgs}x${postsPerOrg}-${blocksPerOrg}b`, seed, `${orgs} organizations × ${postsPerOrg} posts`, (dir) =>
    generateOrgs({ dir, orgs, postsPerOrg, blocksPerOrg, seed }),
  );
}
