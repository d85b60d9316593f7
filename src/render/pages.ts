/**
 * Pages of a list, pure: a list's items (each already canonical JSON) in, the
 * canonical JSON of each page out. A page is an exact slice of the list, so a
 * frontend showing "page 2 of the blog" fetches 20 items, not the whole list.
 *
 * Imports nothing that pulls in zod: the CLI reads the bounds to parse its flag.
 */

/** Items a page holds when a build is not told otherwise (Ghost's and Strapi's default too). */
export const DEFAULT_PAGE_SIZE = 20;
/** The largest page a build writes: a page of 1,000 posts is about 1 MB, far inside any CDN's or framework's item limit. */
export const MAX_PAGE_SIZE = 1000;

/** How many pages a list of `total` items has: page 1 always exists, empty when the list is. */
export const pageCount = (total: number, limit: number): number => Math.max(1, Math.ceil(total / limit));

const ITEMS_OPEN = Buffer.from(`{"items":[`);
const COMMA = Buffer.from(",");

/** What a list or a page is assembled from: its items' canonical JSON, in order, and what follows them. */
export interface ItemsParts {
  items: readonly Buffer[];
  /** `]}` for a list; `],"meta":…}` for a page. */
  tail: string;
}

/**
 * `{"items":[`, the items' canonical JSON joined by commas, then `tail`: the
 * canonical JSON of a list or a page, as bytes, from its items' own bytes.
 */
export function itemsBytes(items: readonly Buffer[], tail: string): Buffer {
  const parts: Buffer[] = [ITEMS_OPEN];
  for (const item of items) {
    if (parts.length > 1) parts.push(COMMA);
    parts.push(item);
  }
  parts.push(Buffer.from(tail));
  return Buffer.concat(parts);
}

/** Each of `items` as a view of `bytes`, which itemsBytes made of them. */
export function itemViews(bytes: Buffer, items: readonly Buffer[]): Buffer[] {
  let at = ITEMS_OPEN.length;
  return items.map((item) => {
    const view = bytes.subarray(at, at + item.length);
    at += item.length + COMMA.length;
    return view;
  });
}

/**
 * Each page of `items` as canonical JSON in UTF-8 (keys in code-unit order, as
 * canonicalJson writes them), assembled from the items' own canonical JSON on
 * each call of its `bytes`.
 */
export function pagesOf(items: readonly Buffer[], limit: number): { page: number; bytes: () => Buffer; parts: ItemsParts }[] {
  const total = items.length;
  const pages = pageCount(total, limit);
  const out: { page: number; bytes: () => Buffer; parts: ItemsParts }[] = [];
  for (let page = 1; page <= pages; page++) {
    const slice = items.slice((page - 1) * limit, page * limit);
    const next = page < pages ? page + 1 : null;
    const prev = page > 1 ? page - 1 : null;
    // `${null}` is "null": the members as JSON writes them, in canonical order.
    const meta = `{"pagination":{"limit":${limit},"next":${next},"page":${page},"pages":${pages},"prev":${prev},"total":${total}}}`;
    const tail = `],"meta":${meta}}`;
    out.push({ page, bytes: () => itemsBytes(slice, tail), parts: { items: slice, tail } });
  }
  return out;
}
