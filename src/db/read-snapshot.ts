/**
 * Reads the organizations' public data in one read transaction, so the build
 * sees one consistent state even while the write proxy writes. Columns are
 * named one by one: `organization_secrets` is never selected here, and neither
 * is any column the output does not need.
 */
import type { z } from "zod";
import type { Problem } from "../errors.js";
import { businessOfferValue, type StoredOffer } from "../model/business.js";
import type { BlockRecord, CategoryRecord, OrgRecord, OrgSnapshot } from "../model/snapshot.js";
import {
  blockRowSchema,
  categoryRowSchema,
  fieldValueSchema,
  organizationRowSchema,
  pageNameSchema,
  type FieldValue,
} from "../model/sources.js";
import { notAnOptionMessage, valueAt } from "../model/issue-messages.js";
import { prepared, type Db } from "./open.js";

const ORG_COLUMNS =
  "id, name, slug, google_analytics_id, meta_pixel_id, gtm_container_id, business_description, allowed_origins";

function check<S extends z.ZodType>(
  schema: S,
  row: unknown,
  where: string,
  problems: Problem[],
): z.output<S> | undefined {
  const result = schema.safeParse(row);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    const member = issue.path.join(".");
    const message = notAnOptionMessage(issue, valueAt(row, issue.path)) ?? issue.message;
    problems.push({ where, message: member ? `${member}: ${message}` : message });
  }
  return undefined;
}

interface OrgRow {
  id: string;
  name: string;
  slug: string;
  google_analytics_id: string | null;
  meta_pixel_id: string | null;
  gtm_container_id: string | null;
  business_description: string;
  allowed_origins: string | null;
}

/** Lists organization ids (all, in code-unit order). */
export function listOrgIds(db: Db): string[] {
  return (prepared(db, "SELECT id FROM organizations ORDER BY id").all() as { id: string }[]).map((r) => r.id);
}

interface OfferRow {
  position: number;
  name: string;
  description: string;
  link: string | null;
}

/** A category row as read: validation says what its values are. */
interface CategoryRow {
  id: string;
  slug: unknown;
  value: unknown;
  position: unknown;
}

interface FieldRow {
  block_id: string;
  position: number;
  key: string;
  type: string;
  value: string;
}

interface PageRow {
  block_id: string;
  page: string;
}

interface BlockRow {
  id: string;
}

/** An organization's rows as stored, before any is validated. */
export interface OrgRows {
  id: string;
  org: OrgRow;
  offers: OfferRow[];
  categories: CategoryRow[];
  fields: FieldRow[];
  pages: PageRow[];
  blocks: BlockRow[];
}

function readOrgRow(db: Db, orgId: string): { org: OrgRow; offers: OfferRow[] } | undefined {
  const org = prepared(db, `SELECT ${ORG_COLUMNS} FROM organizations WHERE id = ?`).get(orgId) as OrgRow | undefined;
  if (!org) return undefined;
  const offers = prepared(db, "SELECT position, name, description, link FROM business_offers WHERE org_id = ? ORDER BY position").all(orgId) as OfferRow[];
  return { org, offers };
}

/** Every row of an organization the output is made from, as stored. */
function readOrgRows(db: Db, orgId: string): OrgRows | undefined {
  const record = readOrgRow(db, orgId);
  if (!record) return undefined;
  return {
    id: orgId,
    ...record,
    categories: prepared(db, "SELECT id, slug, value, position FROM categories WHERE org_id = ?").all(orgId) as CategoryRow[],
    fields: prepared(db, "SELECT block_id, position, key, type, value FROM block_fields WHERE org_id = ? ORDER BY block_id, position").all(orgId) as FieldRow[],
    pages: prepared(db, "SELECT block_id, page FROM block_pages WHERE org_id = ? ORDER BY block_id, page").all(orgId) as PageRow[],
    blocks: prepared(db, "SELECT id, slug, name, status, position FROM blocks WHERE org_id = ?").all(orgId) as BlockRow[],
  };
}

function orgRecordOf(orgId: string, raw: OrgRow, offerRows: readonly OfferRow[], problems: Problem[]): OrgRecord | undefined {
  const row = check(organizationRowSchema, raw, `organizations[id=${orgId}]`, problems);
  const offers: StoredOffer[] = [];
  for (const o of offerRows) {
    const offer = check(
      businessOfferValue,
      { name: o.name, description: o.description, link: o.link },
      `business_offers[org_id=${orgId} position=${o.position}]`,
      problems,
    );
    if (offer) offers.push(offer);
  }
  if (!row) return undefined;
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    integrations: {
      googleAnalyticsId: row.google_analytics_id,
      metaPixelId: row.meta_pixel_id,
      gtmContainerId: row.gtm_container_id,
    },
    businessDescription: row.business_description,
    businessOffers: offers,
    allowedOrigins: row.allowed_origins,
  };
}

/** One organization's record alone: what the write proxy needs to re-render its file. */
export function readOrganization(db: Db, orgId: string): { record: OrgRecord | undefined; problems: Problem[] } {
  const problems: Problem[] = [];
  const rows = readOrgRow(db, orgId);
  const record = rows && orgRecordOf(orgId, rows.org, rows.offers, problems);
  return { record, problems };
}

function categoriesOf(orgId: string, rows: readonly CategoryRow[], problems: Problem[]): CategoryRecord[] {
  const out: CategoryRecord[] = [];
  for (const raw of rows) {
    const row = check(categoryRowSchema, raw, `categories[org_id=${orgId} id=${raw.id}]`, problems);
    if (row) out.push(row);
  }
  return out;
}

function parseFieldJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return Symbol.for("invalid-json");
  }
}

const SHOWN_CHARS = 60;

/** A stored value as a message can show it: its start, control characters escaped. */
function shown(value: string): string {
  const start = value.length > SHOWN_CHARS ? `${value.slice(0, SHOWN_CHARS)}…` : value;
  return start.replace(/\p{Cc}/gu, (c) => JSON.stringify(c).slice(1, -1));
}

/** What was stored, and what a field of this type stores: the usual mistake is a text without its quotes. */
function notJsonMessage(type: string, value: string): string {
  const found = value.trim() === "" ? "it is empty" : `found: ${shown(value)}`;
  const expected: Record<string, string> = {
    text: `a text field's value is a JSON string, with its quotes: ${shown(JSON.stringify(value))}`,
    image: `an image field's value is a JSON object: {"url": "https://…", "alt": "…"}`,
    video: `a video field's value is a JSON object: {"url": "https://…", "status": "ready"}`,
  };
  return `is not valid JSON (${found}); ${expected[type] ?? "the value must be JSON"}`;
}

function blocksOf(orgId: string, raw: Pick<OrgRows, "fields" | "pages" | "blocks">, problems: Problem[]): BlockRecord[] {
  const fieldsByBlock = new Map<string, FieldValue[]>();
  for (const f of raw.fields) {
    const where = `block_fields[org_id=${orgId} block_id=${f.block_id} position=${f.position}]`;
    const value = parseFieldJson(f.value);
    if (typeof value === "symbol") {
      problems.push({ where, message: `value: ${notJsonMessage(f.type, f.value)}` });
      continue;
    }
    const field = check(fieldValueSchema, { key: f.key, type: f.type, value }, where, problems);
    if (!field) continue;
    const list = fieldsByBlock.get(f.block_id) ?? [];
    if (list.some((other) => other.key === field.key)) {
      problems.push({ where, message: `key: "${field.key}" is used twice in block ${f.block_id}` });
    }
    list.push(field);
    fieldsByBlock.set(f.block_id, list);
  }

  const pagesByBlock = new Map<string, string[]>();
  for (const p of raw.pages) {
    const where = `block_pages[org_id=${orgId} block_id=${p.block_id} page=${JSON.stringify(p.page)}]`;
    if (check(pageNameSchema, p.page, where, problems) === undefined) continue;
    const list = pagesByBlock.get(p.block_id) ?? [];
    list.push(p.page);
    pagesByBlock.set(p.block_id, list);
  }

  const out: BlockRecord[] = [];
  for (const block of raw.blocks) {
    const row = check(blockRowSchema, block, `blocks[org_id=${orgId} id=${block.id}]`, problems);
    if (!row) continue;
    out.push({ ...row, fields: fieldsByBlock.get(row.id) ?? [], pages: pagesByBlock.get(row.id) ?? [] });
  }
  return out;
}

export interface SnapshotRead {
  orgs: OrgSnapshot[];
  /** Requested ids with no organization row. */
  missing: string[];
  /** Ids that have an organization row, valid or not. */
  rowIds: Set<string>;
  problems: Problem[];
}

/** The rows of the named organizations (all when `orgIds` is undefined), as stored, read in one transaction. */
export interface SnapshotRows {
  orgs: OrgRows[];
  missing: string[];
  rowIds: Set<string>;
}

export function readSnapshotRows(db: Db, orgIds?: readonly string[]): SnapshotRows {
  return db.transaction(() => {
    const rowIds = new Set(listOrgIds(db));
    const ids = orgIds ?? [...rowIds];
    const orgs: OrgRows[] = [];
    for (const orgId of ids) {
      const rows = rowIds.has(orgId) ? readOrgRows(db, orgId) : undefined;
      if (rows) orgs.push(rows);
    }
    return { orgs, missing: ids.filter((id) => !rowIds.has(id)), rowIds };
  })();
}

export interface Unvalidated {
  /** Organizations left out. */
  skip?: ReadonlySet<string>;
  /** Organizations whose blocks are left empty: a build keeps their block files as they are. */
  blocksKept?: ReadonlySet<string>;
}

/**
 * Validates every row read (drafts and archived blocks included, D9) but
 * those `unvalidated` names: the last build validated the same rows with the
 * same code.
 */
export function validateSnapshot(rows: SnapshotRows, unvalidated: Unvalidated = {}): SnapshotRead {
  const { skip, blocksKept } = unvalidated;
  const problems: Problem[] = [];
  const orgs: OrgSnapshot[] = [];
  for (const raw of rows.orgs) {
    if (skip?.has(raw.id)) continue;
    const record = orgRecordOf(raw.id, raw.org, raw.offers, problems);
    if (!record) continue;
    const blocks = blocksKept?.has(raw.id) ? [] : blocksOf(raw.id, raw, problems);
    orgs.push({ ...record, categories: categoriesOf(raw.id, raw.categories, problems), blocks });
  }
  return { orgs, missing: rows.missing, rowIds: rows.rowIds, problems };
}

/**
 * Reads the named organizations (all when `orgIds` is undefined) and validates
 * every row, drafts and archived blocks included (D9).
 */
export function readSnapshot(db: Db, orgIds?: readonly string[]): SnapshotRead {
  return validateSnapshot(readSnapshotRows(db, orgIds));
}
