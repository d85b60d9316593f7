/**
 * Deterministic synthetic organizations for the benchmark: a SQLite database and
 * `posts` markdown files under `<dir>/content/<orgId>/<yyyy>/<slug>.md`, either
 * one large organization ({@link generateOrg}) or many small ones sharing one
 * database ({@link generateOrgs}). The same seed gives byte-identical post files.
 *
 * @example
 *   const org = generateOrg({ dir: "/tmp/org", orgId: "bench", posts: 1000, seed: 42 });
 *   // node dist/cli.js build --db org.db --content org.content --out /tmp/site
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { writeOrgDatabase, writeOrgsDatabase, type OrgDatabase } from "./org-db.js";
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
    const post = writePostFile(content, folders, renderPost(orgId, seed, index));
    statusCounts[post.status]++;
    if (post.status === "published" && index % stride === 0 && samplePublished.length < SAMPLE_SIZE) {
      samplePublished.push({ id: post.id, relPath: post.relPath });
    }
  }
  if (samplePublished.length === 0) throw new Error(`no published post among ${posts}; generate more`);
  return { ...orgDb, orgId, seed, posts, db, content, statusCounts, samplePublished };
}

export interface GenerateOrgsOptions {
  /** A folder that is empty or does not exist yet. */
  dir: string;
  orgs: number;
  postsPerOrg: number;
  blocksPerOrg: number;
  seed: number;
}

export interface GeneratedOrgs {
  seed: number;
  orgCount: number;
  postsPerOrg: number;
  blocksPerOrg: number;
  /** Every post of every organization. */
  posts: number;
  db: string;
  content: string;
  statusCounts: Record<PostStatus, number>;
  /** Per organization, in id order: its id and one of its published posts (the bench edits it). */
  orgs: { orgId: string; samplePublished: { id: string; relPath: string } }[];
}

/** `org-001` … : ids that sort as the organizations were generated. */
export const manyOrgId = (index: number, count: number) => `org-${String(index).padStart(String(count).length, "0")}`;

/**
 * `orgs` organizations of `postsPerOrg` posts and `blocksPerOrg` blocks each, in
 * one database, posts under `<dir>/content/<orgId>/`. Each organization's rows
 * are drawn from a seed of its own (so keys differ, as the keys' index wants),
 * and posts are numbered across the whole corpus (so no two are alike).
 */
export function generateOrgs(options: GenerateOrgsOptions): GeneratedOrgs {
  const { dir, orgs: orgCount, postsPerOrg, blocksPerOrg, seed } = options;
  const content = path.join(dir, "content");
  const db = path.join(dir, "cdsnap.db");
  const ids = Array.from({ length: orgCount }, (_, i) => manyOrgId(i + 1, orgCount));
  mkdirSync(content, { recursive: true });
  writeOrgsDatabase(db, ids.map((orgId, i) => ({ orgId, seed: seed + i + 1 })), blocksPerOrg);

  const statusCounts: Record<PostStatus, number> = { published: 0, draft: 0, archived: 0, scheduled: 0 };
  const orgs: GeneratedOrgs["orgs"] = [];
  const folders = new Set<string>();
  ids.forEach((orgId, i) => {
    mkdirSync(path.join(content, orgId), { recursive: true });
    let sample: { id: string; relPath: string } | null = null;
    for (let n = 1; n <= postsPerOrg; n++) {
      const post = writePostFile(content, folders, renderPost(orgId, seed, i * postsPerOrg + n));
      statusCounts[post.status]++;
      if (post.status === "published" && sample === null) sample = { id: post.id, relPath: post.relPath };
    }
    if (sample === null) throw new Error(`no published post among the ${postsPerOrg} of ${orgId}; generate more`);
    orgs.push({ orgId, samplePublished: sample });
  });
  return { seed, orgCount, postsPerOrg, blocksPerOrg, posts: orgCount * postsPerOrg, db, content, statusCounts, orgs };
}

/** Writes a generated post under `content`, making its folder the first time (`folders` remembers). */
function writePostFile<P extends { relPath: string; text: string }>(content: string, folders: Set<string>, post: P): P {
  const file = path.join(content, post.relPath);
  const folder = path.dirname(file);
  if (!folders.has(folder)) {
    mkdirSync(folder, { recursive: true });
    folders.add(folder);
  }
  writeFileSync(file, post.text);
  return post;
}
