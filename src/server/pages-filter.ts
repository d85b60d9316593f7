/**
 * D8: `?pages=` on the blocks list, answered from the membership the build
 * wrote beside the tree and the list file itself, never from the database.
 */
import { blockListSchema, type BlockList } from "../model/api.js";
import type { PageMembership } from "../render/blocks.js";

/** The requested page names, or null when the filter is off. */
export function requestedPages(search: URLSearchParams): Set<string> | null {
  const names = search
    .getAll("pages")
    .flatMap((value) => value.split(","))
    .map((name) => name.trim())
    .filter((name) => name !== "");
  return names.length > 0 ? new Set(names) : null;
}

/** The published blocks on any of `pages`, each once, in the list's D2 order. */
export function filterBlocks(list: BlockList, membership: PageMembership, pages: ReadonlySet<string>): BlockList {
  const wanted = new Set<string>();
  for (const page of pages) {
    if (Object.hasOwn(membership, page)) for (const id of membership[page]!) wanted.add(id);
  }
  return blockListSchema.parse({ items: list.items.filter((block) => wanted.has(block.id)) });
}
