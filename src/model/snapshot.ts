/**
 * Validated source data: what the readers hand to the pure renderer. Nothing in
 * here may come from `organization_secrets`; the types have no place for it.
 */
import type { StoredOffer } from "./business.js";
import type { FieldValue, FrontMatter } from "./sources.js";
import type { PublishDate } from "./rules.js";

export interface Integrations {
  googleAnalyticsId: string | null;
  metaPixelId: string | null;
  gtmContainerId: string | null;
}

export interface OrgRecord {
  id: string;
  name: string;
  slug: string;
  integrations: Integrations;
  businessDescription: string;
  businessOffers: StoredOffer[];
  allowedOrigins: string[] | null;
}

export interface CategoryRecord {
  id: string;
  slug: string;
  value: string;
  position: number;
}

export interface BlockRecord {
  id: string;
  slug: string;
  name: string;
  status: "draft" | "published" | "archived";
  position: number;
  /** Already in `position` order. */
  fields: FieldValue[];
  pages: string[];
}

export interface OrgSnapshot extends OrgRecord {
  categories: CategoryRecord[];
  blocks: BlockRecord[];
}

/** A post as parsed from its file: what the front matter says and the body. */
export interface ParsedPost {
  /** Path relative to the content folder, for messages. */
  file: string;
  meta: FrontMatter;
  body: string;
  publish: PublishDate;
  /** File line of each top-level front matter key, so cross-file problems can say file:line. */
  lines?: Record<string, number>;
}

/**
 * What the organization-level plan needs of a post: enough to check it
 * against the others (ids, slugs, categories), to say whether it is published,
 * to order the list and to place its files. A post record is one; so is what
 * the build state keeps of a post whose file did not change (UnchangedPost).
 */
export interface PostHead {
  file: string;
  meta: Pick<FrontMatter, "id" | "slug" | "status" | "publishedAt" | "category">;
  publish: PublishDate;
  /** File line of front matter keys, for messages (of an unchanged post: its id, slug and category only). */
  lines?: Record<string, number>;
  fingerprint: string;
  sha256: string;
}

/**
 * A post whose file has the bytes the live generation's build parsed, with the
 * same code: its record is not read. What that build made of it stands while
 * its category is the same: its files, and its list item when it was published.
 */
export interface UnchangedPost extends PostHead {
  built: {
    /** Its category's slug and name when its files were rendered (categoryKeyOf). */
    category: string;
    /** Its list item as canonical JSON in UTF-8; null when it was not published. */
    summary: Buffer | null;
  };
}

/**
 * Where a build keeps the records of the posts it parsed (emit/record-spool.ts):
 * as JSON, in memory up to a budget and in a file past it, so that what it
 * holds of each post as objects is its head.
 */
export interface RecordSpool {
  /** Keeps the record, and answers the head that stands for it (its body too, when `body` is given). */
  keep: (parsed: SpoolForm, body?: string) => SpooledPost;
  /** The record as the build state stores it: JSON, without its body, fingerprint and hash. */
  jsonOf: (post: SpooledPost) => string;
}

/** A post parsed (or read back whole) this build, whose record waits in the build's spool. */
export interface SpooledPost extends PostHead {
  spool: RecordSpool;
  /** Its record's row in the spool. */
  row: number;
  /** Its markdown body, while the build holds it (read-posts.ts bodyBudget). */
  body?: string;
}

/**
 * A parsed post in the form a spool keeps it: its head, and its record as the
 * JSON recordJsonOf makes. A parse worker answers a build in this form: two
 * strings and a small object cost the thread that takes them in a fraction of
 * what a record's objects cost to copy, and the JSON is made on the worker's core.
 */
export interface SpoolForm {
  head: PostHead;
  json: string;
  body?: string;
}

export function spoolFormOf(record: PostRecord): SpoolForm {
  const head: PostHead = { file: record.file, ...headFieldsOf(record), fingerprint: record.fingerprint, sha256: record.sha256 };
  return { head, json: recordJsonOf(record), ...(record.body === undefined ? {} : { body: record.body }) };
}

/** A post parsed (or read back whole) this build: its record in hand, or in the build's spool. */
export type FreshPost = PostRecord | SpooledPost;

/** A post as a build plans it: parsed (or read back whole) this build, or unchanged since the last. */
export type Post = FreshPost | UnchangedPost;

export const isUnchanged = (post: Post): post is UnchangedPost => "built" in post;

const isSpooled = (post: FreshPost): post is SpooledPost => "spool" in post;

/** What a post's record is stored as: its JSON without the body and the file's identity (held beside it). */
export function recordJsonOf(post: FreshPost): string {
  if (isSpooled(post)) return post.spool.jsonOf(post);
  const { body: _body, fingerprint: _fingerprint, sha256: _sha256, ...stored } = post;
  return JSON.stringify(stored);
}

/** A record from the JSON recordJsonOf made of it, and the identity and body held beside it. */
export function recordFromJson(json: string, beside: Pick<PostRecord, "fingerprint" | "sha256" | "body">): PostRecord {
  const record = JSON.parse(json) as PostRecord;
  record.fingerprint = beside.fingerprint;
  record.sha256 = beside.sha256;
  if (beside.body !== undefined) record.body = beside.body;
  return record;
}

/** A fresh post's whole record: the one in hand, or the spool's read back. */
export function recordOf(post: FreshPost): PostRecord {
  return isSpooled(post) ? recordFromJson(post.spool.jsonOf(post), post) : post;
}

/** The lines of the keys a head's checks quote (sources/cross-check.ts). */
const HEAD_LINES = ["id", "slug", "category"] as const;

/** What a post's head holds but its file and identity: a small object of its own, sharing nothing with the record. */
export function headFieldsOf(post: Omit<PostHead, "file" | "fingerprint" | "sha256">): Omit<PostHead, "file" | "fingerprint" | "sha256"> {
  const { meta, publish, lines } = post;
  const head: Omit<PostHead, "file" | "fingerprint" | "sha256"> = {
    meta: { id: meta.id, slug: meta.slug, status: meta.status, publishedAt: meta.publishedAt, ...(meta.category === undefined ? {} : { category: meta.category }) },
    publish: { date: publish.date, instant: publish.instant },
  };
  if (lines) head.lines = Object.fromEntries(HEAD_LINES.flatMap((key) => (lines[key] === undefined ? [] : [[key, lines[key]]])));
  return head;
}

/** The posts of sources read without a previous build, where every post is parsed: each whole. */
export function parsedOnly(posts: readonly Post[]): PostRecord[] {
  return posts.map((post) => {
    if (isUnchanged(post)) throw new Error(`${post.file} was read as unchanged where every post is parsed`);
    return recordOf(post);
  });
}

/** A validated post as the build holds it. */
export interface PostRecord extends Omit<ParsedPost, "body"> {
  /** From the front matter, or derived from the body (D3). */
  excerpt: string;
  /** Identity of the source file when it was read (size, mtime, inode): an unchanged file is not read again. */
  fingerprint: string;
  /** SHA-256 of the source file's bytes: the post's identity, so a file copied anew (a fresh checkout) is not parsed again. */
  sha256: string;
  /** The markdown body, unless the build let it go to bound memory; then it is read again when needed. */
  body?: string;
}
