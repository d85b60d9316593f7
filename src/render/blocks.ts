import { blockSchema, categoryListSchema, type Block } from "../model/api.js";
import type { BlockRecord, CategoryRecord } from "../model/snapshot.js";
import { compareCodeUnits } from "./canonical-json.js";

/** D2: position, then id in code-unit order. */
export function sortBlocks<T extends Pick<BlockRecord, "position" | "id">>(blocks: readonly T[]): T[] {
  return [...blocks].sort((a, b) => a.position - b.position || compareCodeUnits(a.id, b.id));
}

/** D2: position, then display value, then id. */
export function sortCategories(categories: readonly CategoryRecord[]): CategoryRecord[] {
  return [...categories].sort(
    (a, b) => a.position - b.position || compareCodeUnits(a.value, b.value) || compareCodeUnits(a.id, b.id),
  );
}

export function renderBlock(block: BlockRecord): Block {
  return blockSchema.parse({
    id: block.id,
    slug: block.slug,
    name: block.name,
    status: "published",
    fields: block.fields.map((f) => ({ key: f.key, type: f.type, value: f.value })),
  });
}

/**
 * D8: page name → ids of the published blocks on it, in D2 order. The server
 * answers `?pages=` from this alone, never from the database.
 */
export type PageMembership = Record<string, string[]>;

export interface RenderedBlocks {
  list: { items: Block[] };
  blocks: Block[];
  pages: PageMembership;
  unpublished: number;
}

export function renderBlocks(records: readonly BlockRecord[]): RenderedBlocks {
  const published = sortBlocks(records.filter((b) => b.status === "published"));
  const blocks = published.map(renderBlock);
  const pages: PageMembership = {};
  for (const record of published) {
    for (const page of record.pages) (pages[page] ??= []).push(record.id);
  }
  return {
    // Each item is held to the block shape above: the list is those items and nothing else.
    list: { items: blocks },
    blocks,
    pages,
    unpublished: records.length - published.length,
  };
}

export function renderCategories(categories: readonly CategoryRecord[]) {
  return categoryListSchema.parse({
    items: sortCategories(categories).map((c) => ({ id: c.id, slug: c.slug, value: c.value })),
  });
}
