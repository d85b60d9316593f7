/**
 * The SQLite side of synthetic organizations: per organization one row, 12
 * categories, 2,000 blocks by default (about 90% published) with 3–6 fields of
 * every type, their pages, 3 offers, two secrets and two API keys. One database
 * may hold many organizations (the many-organizations corpus gives each fewer
 * blocks). Migrated with the project's own migrations, so the schema is always
 * the one `cdsnap build` wants.
 */
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { migrate } from "../src/db/migrations.js";
import { chance, hex, int, pad, pick, pickDistinct, streamOf, type Rng } from "./prng.js";
import { CATEGORIES, PAGES, WORDS } from "./words.js";

export const BLOCK_COUNT = 2000;

export interface OrgKeys {
  /** Raw key with scopes 'read write'. */
  writeKey: string;
  /** Raw key with scope 'read'. */
  readKey: string;
}

export interface OrgDatabase extends OrgKeys {
  /** A published block and the position of one of its text fields (the bench edits it). */
  editableBlock: { id: string; position: number; value: string };
}

const CREATED_AT = "2025-01-01T00:00:00.000Z";

function sentence(rng: Rng, min: number, max: number): string {
  const parts: string[] = [];
  for (let n = int(rng, min, max); n > 0; n--) parts.push(pick(rng, WORDS));
  const text = parts.join(" ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function fieldValue(rng: Rng, type: string, blockIndex: number): string {
  if (type === "image") {
    const url = chance(rng, 0.3) ? `/images/blocks/${hex(rng, 8)}.png` : `https://cdn.example.com/blocks/${blockIndex}/${hex(rng, 10)}.jpg`;
    return JSON.stringify({ url, alt: sentence(rng, 3, 8) });
  }
  if (type === "video") {
    const url = chance(rng, 0.2) ? `/media/${hex(rng, 8)}.mp4` : `https://cdn.example.com/video/${hex(rng, 12)}.mp4`;
    return JSON.stringify({ url, status: pick(rng, ["ready", "ready", "ready", "processing", "failed"] as const) });
  }
  if (chance(rng, 0.3)) {
    const paragraphs: string[] = [];
    for (let n = int(rng, 1, 4); n > 0; n--) paragraphs.push(sentence(rng, 20, 60));
    return JSON.stringify(paragraphs.join("\n\n"));
  }
  return JSON.stringify(sentence(rng, 2, 12));
}

function sha256Hex(raw: string): string {
  return createHash("sha256").update(raw, "utf8").digest("hex");
}

/** Creates `file` (which must not exist) and fills it with one organization; returns the raw keys. */
export function writeOrgDatabase(file: string, orgId: string, seed: number, blocks: number = BLOCK_COUNT): OrgDatabase {
  return writeOrgsDatabase(file, [{ orgId, seed }], blocks)[0]!;
}

/**
 * Creates `file` (which must not exist) with every organization of `orgs`,
 * each drawn from its own seed and given `blocks` blocks; returns their raw
 * keys in the same order.
 */
export function writeOrgsDatabase(file: string, orgs: readonly { orgId: string; seed: number }[], blocks: number = BLOCK_COUNT): OrgDatabase[] {
  const db = new Database(file);
  try {
    migrate(db);
    const written = db.transaction(() => orgs.map(({ orgId, seed }) => insertOrg(db, orgId, seed, blocks)))();
    // One self-contained file in the cache: no -wal beside it.
    db.pragma("journal_mode = DELETE");
    return written;
  } finally {
    db.close();
  }
}

function insertOrg(db: Database.Database, orgId: string, seed: number, blocks: number): OrgDatabase {
  const rng = streamOf(seed, "org", 0);
  const keys: OrgKeys = { writeKey: `cdsnap_bench_write_${hex(rng, 32)}`, readKey: `cdsnap_bench_read_${hex(rng, 32)}` };
  let editableBlock: OrgDatabase["editableBlock"] | null = null;

  const insert = (sql: string) => db.prepare(sql);
  const org = insert("INSERT INTO organizations (id, name, slug, google_analytics_id, meta_pixel_id, gtm_container_id, business_description, allowed_origins) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  const secret = insert("INSERT INTO organization_secrets (org_id, name, value) VALUES (?, ?, ?)");
  const offer = insert("INSERT INTO business_offers (org_id, position, name, description, link) VALUES (?, ?, ?, ?, ?)");
  const key = insert("INSERT INTO api_keys (id, org_id, key_sha256, scopes, label, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL)");
  const category = insert("INSERT INTO categories (org_id, id, slug, value, position) VALUES (?, ?, ?, ?, ?)");
  const block = insert("INSERT INTO blocks (org_id, id, slug, name, status, position) VALUES (?, ?, ?, ?, ?, ?)");
  const field = insert("INSERT INTO block_fields (org_id, block_id, position, key, type, value) VALUES (?, ?, ?, ?, ?, ?)");
  const page = insert("INSERT INTO block_pages (org_id, block_id, page) VALUES (?, ?, ?)");

  org.run(orgId, `Bench Organization ${orgId}`, `${orgId}-org`, "G-BENCH0001", null, "GTM-BENCH1", sentence(rng, 30, 60), null);
  secret.run(orgId, "stripe_secret_key", `sk_test_BENCH_${hex(rng, 24)}`);
  secret.run(orgId, "smtp_password", `BENCH-smtp-${hex(rng, 20)}`);
  for (let i = 0; i < 3; i++) {
    offer.run(orgId, i, sentence(rng, 2, 4), sentence(rng, 10, 30), i === 2 ? null : `https://${orgId}.example.com/offer/${i}`);
  }
  key.run(`${orgId}-write`, orgId, sha256Hex(keys.writeKey), "read write", "bench", CREATED_AT);
  key.run(`${orgId}-read`, orgId, sha256Hex(keys.readKey), "read", "bench", CREATED_AT);
  CATEGORIES.forEach((c, i) => category.run(orgId, `cat-${pad(i + 1, 2)}`, c.slug, c.value, Math.floor(i / 3)));

  for (let i = 1; i <= blocks; i++) {
    const b = streamOf(seed, "block", i);
    const id = `blk-${pad(i, 5)}`;
    const r = b();
    const status = r < 0.9 ? "published" : r < 0.96 ? "draft" : "archived";
    block.run(orgId, id, `${pick(b, WORDS)}-${pick(b, WORDS)}-${i}`, sentence(b, 2, 5).slice(0, -1), status, int(b, 0, 99));
    // The first three fields cycle through the types, so every block count holds all three.
    const count = int(b, 3, 6);
    for (let position = 0; position < count; position++) {
      const type = position < 3 ? (["text", "image", "video"] as const)[(i + position) % 3]! : pick(b, ["text", "text", "image", "video"]);
      const value = fieldValue(b, type, i);
      field.run(orgId, id, position, `${type}_${position}`, type, value);
      if (editableBlock === null && status === "published" && type === "text") editableBlock = { id, position, value };
    }
    for (const name of pickDistinct(b, PAGES, int(b, 0, 3))) page.run(orgId, id, name);
  }
  if (editableBlock === null) throw new Error(`no published block with a text field was generated for ${orgId}`);
  return { ...keys, editableBlock };
}
