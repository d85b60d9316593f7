/**
 * `?pages=` on a block list: the blocks of the pages asked for, as a file of
 * its own with its own ETag. Which page holds which block comes from the
 * generation's page membership file of the organization.
 */
import { readFile } from "node:fs/promises";
import { filterBlocks, indexPages, type PageIndex } from "../api-reads.js";
import type { BlockList } from "../model/api.js";
import type { PageMembership } from "../render/blocks.js";
import { canonicalJson } from "../render/canonical-json.js";
import { pagesFileOf, type Generation } from "../emit/tree-store.js";
import { etagOf, type CachedFile } from "./file-cache.js";

/** `file` (a block list) with only the blocks of `pages`; membership and parsed lists are kept for the live generation only. */
export type PagesFilter = (gen: Generation, orgId: string, file: CachedFile, pages: Set<string>) => Promise<CachedFile>;

export function createPagesFilter(): PagesFilter {
  const membership = new Map<string, PageIndex>();
  let membershipGen = "";
  const parsedLists = new Map<string, BlockList>();

  async function pagesOf(gen: Generation, orgId: string): Promise<PageIndex> {
    if (gen.id !== membershipGen) {
      membership.clear();
      parsedLists.clear();
      membershipGen = gen.id;
    }
    let pages = membership.get(orgId);
    if (!pages) {
      // Every generation has one per organization: one missing or unreadable is a broken tree (a logged 500), not a page with no blocks.
      pages = indexPages(JSON.parse(await readFile(pagesFileOf(gen, orgId), "utf8")) as PageMembership);
      membership.set(orgId, pages);
    }
    return pages;
  }

  return async function filtered(gen, orgId, file, pages) {
    const membershipOfOrg = await pagesOf(gen, orgId);
    let list = parsedLists.get(file.etag);
    if (!list) {
      list = JSON.parse(file.bytes.toString("utf8")) as BlockList;
      parsedLists.set(file.etag, list);
    }
    const bytes = Buffer.from(canonicalJson(filterBlocks(list, membershipOfOrg, pages)), "utf8");
    return { bytes, etag: etagOf(bytes), mtime: file.mtime };
  };
}
