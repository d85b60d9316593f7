/**
 * Deterministic synthetic organizations for the benchmark: a SQLite database and
 * `posts` markdown files under `<dir>/content/<orgId>/<yyyy>/<slug>.md`.
 * The same seed gives byte-identical post files.
 *
 * @example
 *   const org = generateOrg({ dir: "/tmp/org", orgId: "bench", posts: 1000, seed: 42 });
 *   // node dist/cli.js build --db org.db --content org.content --out /tmp/site
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { writeOrgDatabase, type OrgDatabase } from "./org-db.js";
import { renderPost, type PostStatus } from "./post.js";

export interface GenerateOptions {
  /** A folder that is empty or does not exist yet. */
  dir: string;
  orgId: string;
  posts: number;
  seed: number;
}

export interface GeneratedOrg extends OrgDatabase {
  orgId: string;
  seed: number;
  posts: number;
  db: string;
  content: string;
  statusCounts: Record<PostStatus, number>;
  /** Published posts spread over the organization (the bench GETs and edits them). */
  samplePublished: { id: string; relPath: string }[];
}

const SAMPLE_SIZE = 64;

export function generateOrg(options: GenerateOptions): GeneratedOrg {
  const { dir, orgId, posts, seed } = options;
  const content = path.join(dir, "content");
  const db = path.join(dir, "cdsnap.db");
  mkdirSync(path.join(content, orgId), { recursive: true });
  const orgDb = writeOrgDatabase(db, orgId, seed);

  const statusCounts: Record<PostStatus, number> = { published: 0, draft: 0, archived: 0, scheduled: 0 };
  const samplePublished: GeneratedOrg["samplePublished"] = [];
  const stride = Math.max(1, Math.floor(posts / SAMPLE_SIZE));
  const folders = new Set<string>();
  // Sequential synchronous writes: one descriptor open at a time, even for 100k files.
  for (let index = 1; index <= posts; index++) {
    const post = renderPost(orgId, seed, index);
    const file = path.join(content, post.relPath);
    const folder = path.dirname(file);
    if (!folders.has(folder)) {
      mkdirSync(folder, { recursive: true });
      folders.add(folder);
    }
    writeFileSync(file, post.text);
    statusCounts[post.status]++;
    if (post.status === "published" && index % stride === 0 && samplePublished.length < SAMPLE_SIZE) {
      samplePublished.push({ id: post.id, relPath: post.relPath });
    }
  }
  if (samplePublished.length === 0) throw new Error(`no published post among ${posts}; generate more`);
  return { ...orgDb, orgId, seed, posts, db, content, statusCounts, samplePublished };
}
