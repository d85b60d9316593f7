/**
 * The audit's rules for the pages of the lists, pure: each page of the
 * contents list, and of each category's share of it, is an exact slice of
 * that list (the same items, by id and by hash, in the same order), says
 * where it lies in `meta.pagination`, and exists from 1 up to the last page
 * and no further. The items themselves are the list's: whatever the list may
 * not hold (a draft, a secret), a page cannot either.
 */
import { fileOf, type Route } from "../api-paths.js";
import type { Problem } from "../errors.js";
import { pageCount } from "../render/pages.js";
import { kindOf, type RouteKind } from "../route-table.js";
import type { FileFacts, ListItemFacts } from "./tree-rules.js";

const LIST = kindOf("post", "list");
const CATEGORIES = kindOf("category", "list");
const CONTENTS_PAGE: RouteKind = "contentsPage";
const CATEGORY_PAGE: RouteKind = "categoryContentsPage";
const REBUILD = "rebuild the tree with cdsnap build";

const pageOf = (route: Route) => Number((route as { page?: string }).page);

export function checkPages(orgId: string, files: readonly FileFacts[]): Problem[] {
  const list = files.find((f) => f.route.kind === LIST);
  // A missing list is the organization files' rule to report; without it no page can be judged.
  if (!list?.items) return [];
  const problems: Problem[] = [];
  const contents = new Map<number, FileFacts>();
  const byCategory = new Map<string, Map<number, FileFacts>>();
  for (const f of files) {
    if (f.route.kind === CONTENTS_PAGE) contents.set(pageOf(f.route), f);
    else if (f.route.kind === CATEGORY_PAGE && "slug" in f.route) {
      const pages = byCategory.get(f.route.slug) ?? new Map<number, FileFacts>();
      pages.set(pageOf(f.route), f);
      byCategory.set(f.route.slug, pages);
    }
  }
  const firstRel = fileOf({ kind: CONTENTS_PAGE, orgId, page: "1" } as Route);
  const limit = contents.get(1)?.pagination?.limit;
  if (limit === undefined) {
    problems.push({ where: firstRel, message: `is missing: page 1 of the contents list always exists, empty when nothing is published; ${REBUILD}` });
    return problems;
  }
  const series = (pages: ReadonlyMap<number, FileFacts>, items: readonly ListItemFacts[], relOf: (page: number) => string, what: string) =>
    checkSeries(pages, items, limit, relOf, `${what} (${list.rel}${what === "the contents list" ? "" : " filtered by categorySlug"})`, problems);
  series(contents, list.items, (page) => fileOf({ kind: CONTENTS_PAGE, orgId, page: String(page) } as Route), "the contents list");
  const categories = files.find((f) => f.route.kind === CATEGORIES);
  const slugs = new Set(categories?.slugs ?? []);
  for (const slug of slugs) {
    const items = list.items.filter((item) => item.category === slug);
    const relOf = (page: number) => fileOf({ kind: CATEGORY_PAGE, orgId, slug, page: String(page) } as Route);
    series(byCategory.get(slug) ?? new Map(), items, relOf, `the posts of category "${slug}"`);
  }
  if (categories) {
    for (const [slug, pages] of byCategory) {
      if (slugs.has(slug)) continue;
      for (const f of pages.values()) {
        problems.push({ where: f.rel, message: `is a page of category "${slug}", which ${categories.rel} does not list; ${REBUILD}` });
      }
    }
  }
  return problems;
}

function checkSeries(
  pages: ReadonlyMap<number, FileFacts>,
  items: readonly ListItemFacts[],
  limit: number,
  relOf: (page: number) => string,
  what: string,
  problems: Problem[],
): void {
  const add = (where: string, message: string) => problems.push({ where, message: `${message}; ${REBUILD}` });
  const total = items.length;
  const count = pageCount(total, limit);
  for (let page = 1; page <= count; page++) {
    const f = pages.get(page);
    if (!f) {
      add(relOf(page), `is missing: ${what} has ${total} items, so ${count} pages of ${limit}`);
      continue;
    }
    const expected = { page, limit, pages: count, total, next: page < count ? page + 1 : null, prev: page > 1 ? page - 1 : null };
    const said = f.pagination;
    if (!said || (Object.keys(expected) as (keyof typeof expected)[]).some((key) => said[key] !== expected[key])) {
      add(f.rel, `says meta.pagination ${JSON.stringify(said)}; cut from ${what} it is ${JSON.stringify(expected)}`);
    }
    const from = (page - 1) * limit;
    const slice = items.slice(from, from + limit);
    const held = f.items ?? [];
    const differs = held.length !== slice.length || held.some((item, i) => item.id !== slice[i]!.id || item.hash !== slice[i]!.hash);
    if (differs) add(f.rel, `does not hold items ${from} to ${from + slice.length - 1} of ${what} as they are there: a page is an exact slice of its list`);
  }
  for (const [page, f] of pages) {
    if (page > count) add(f.rel, `is past the last page: ${what} has ${total} items, so ${count} pages of ${limit}`);
  }
}
