/**
 * The cross-file rules of the audit, pure: the facts read from every file of a
 * tree in, problems out. Every file has already parsed and matched its response
 * shape; here the files are held against each other and against what the
 * sources publish:
 *
 * - an unpublished (draft, archived, scheduled) or unknown item is reachable by
 *   no path: no id file, no by-slug file, no references file, no list item;
 * - a published item is reachable by every path: id, by-slug, references (posts)
 *   and the list, and all of them answer the same data;
 * - every organization has its organization, categories, blocks and contents file;
 * - each page of a list is an exact slice of it (page-rules.ts).
 *
 * Without expectations (no post sources, or an organization an `--org` build
 * carried over) the items the tree itself mentions must be reachable by every
 * path, so a file planted or deleted by hand still shows.
 */
import { fileOf, type Route } from "../api-paths.js";
import { ORG_FILE_KINDS, itemRoute, kindOf, type RouteKind } from "../route-table.js";
import type { Problem } from "../errors.js";
import type { AuditExpectations, ItemExpectation, ItemRef, OrgExpectation } from "./audit-inputs.js";
import { checkPages } from "./page-rules.js";

/** One block or post file: its data's id and slug, and hashes of what other paths must agree with. */
export interface ItemFacts {
  id: string;
  slug: string;
  /** sha256 of the canonical JSON of the whole response. */
  hash: string;
  /** Of what the list item of this block or post must be (the summary, for posts). */
  listHash: string;
  /** Of what `/references` must answer (posts only). */
  referencesHash?: string;
}

export interface ListItemFacts {
  id: string;
  slug: string;
  hash: string;
  /** A post's `categorySlug`: a category's pages hold the list's items of that category. */
  category?: string | null;
}

export interface FileFacts {
  /** The file, relative to the tree root. */
  rel: string;
  route: Route;
  hash: string;
  /** block, blockBySlug, content, contentBySlug. */
  item?: ItemFacts;
  /** blocks, contents and their pages: the items of the list. */
  items?: ListItemFacts[];
  /** A page of a list: where it says it lies. */
  pagination?: { page: number; limit: number; pages: number; total: number; next: number | null; prev: number | null };
  /** categories: the ids listed; organization: its id. */
  ids?: string[];
  /** categories: the slugs listed, whose pages must exist. */
  slugs?: string[];
}

/** The routes that reach one block or post, from the route table. */
interface Kind {
  noun: "block" | "post";
  id: RouteKind;
  slug: RouteKind;
  list: RouteKind;
  references: RouteKind | null;
}

const BLOCKS: Kind = { noun: "block", id: kindOf("block", "byId"), slug: kindOf("block", "bySlug"), list: kindOf("block", "list"), references: null };
const POSTS: Kind = {
  noun: "post",
  id: kindOf("post", "byId"),
  slug: kindOf("post", "bySlug"),
  list: kindOf("post", "list"),
  references: kindOf("post", "references"),
};
const REBUILD = "rebuild the tree with cdsnap build";

/**
 * The blocks and posts, by id and by slug, whose rules are checked in an
 * organization audited by difference (audit-by-difference.ts): the items of
 * the lists outside it were checked before and nothing they depend on changed.
 */
export interface ItemScope {
  ids: ReadonlySet<string>;
  slugs: ReadonlySet<string>;
}

export interface OrgScope {
  blocks: ItemScope;
  posts: ItemScope;
  /** Whether the pages' rules run: a change touched a list, a page or the categories. */
  pages: boolean;
}

/**
 * Checks every organization of the tree, and every organization expected in
 * it; an organization with a scope only for the items in it (its facts and
 * expectations are then those of the items in scope, and its whole lists).
 */
export function checkTree(facts: readonly FileFacts[], expectations: AuditExpectations, scopes?: ReadonlyMap<string, OrgScope>): Problem[] {
  const byOrg = new Map<string, FileFacts[]>();
  for (const f of facts) {
    const list = byOrg.get(f.route.orgId) ?? [];
    list.push(f);
    byOrg.set(f.route.orgId, list);
  }
  const expected = new Map(expectations.orgs.map((o) => [o.orgId, o]));
  const orgIds = [...new Set([...byOrg.keys(), ...expected.keys()])].filter((id) => expectations.orgIds.has(id)).sort();
  return orgIds.flatMap((orgId) => checkOrg(orgId, byOrg.get(orgId) ?? [], expected.get(orgId), scopes?.get(orgId)));
}

function checkOrg(orgId: string, files: readonly FileFacts[], exp: OrgExpectation | undefined, scope: OrgScope | undefined): Problem[] {
  const problems: Problem[] = [];
  const single = (kind: RouteKind) => files.find((f) => f.route.kind === kind);
  for (const kind of ORG_FILE_KINDS) {
    if (!single(kind)) {
      problems.push({
        where: fileOf({ kind, orgId } as Route),
        message: `is missing: every organization has this file, and organization ${orgId} exists; ${REBUILD}`,
      });
    }
  }
  const org = single(kindOf("organization", "single"));
  if (org && org.ids?.[0] !== orgId) {
    problems.push({ where: org.rel, message: `holds organization "${org.ids?.[0]}", not ${orgId}; ${REBUILD}` });
  }
  const categories = single(kindOf("category", "list"));
  if (categories && exp) {
    const listed = new Set(categories.ids ?? []);
    const known = new Set(exp.categoryIds);
    for (const id of exp.categoryIds) {
      if (!listed.has(id)) {
        problems.push({ where: categories.rel, message: `does not list category "${id}" of the database; ${REBUILD}` });
      }
    }
    for (const id of listed) {
      if (!known.has(id)) {
        problems.push({
          where: categories.rel,
          message: `lists category "${id}", which organization ${orgId} does not have in the database; ${REBUILD}`,
        });
      }
    }
  }
  problems.push(...checkItems(BLOCKS, orgId, files, exp ? exp.blocks : null, scope?.blocks));
  problems.push(...checkItems(POSTS, orgId, files, exp?.posts ?? null, scope?.posts));
  if (scope?.pages !== false) problems.push(...checkPages(orgId, files));
  return problems;
}

function indexBy(files: readonly FileFacts[], kind: string, key: (route: Route) => string): Map<string, FileFacts> {
  const map = new Map<string, FileFacts>();
  for (const f of files) if (f.route.kind === kind) map.set(key(f.route), f);
  return map;
}

const routeId = (r: Route) => ("id" in r ? r.id : "");
const routeSlug = (r: Route) => ("slug" in r ? r.slug : "");

function checkItems(kind: Kind, orgId: string, files: readonly FileFacts[], exp: ItemExpectation | null, scope?: ItemScope): Problem[] {
  const problems: Problem[] = [];
  const add = (where: string, message: string) => problems.push({ where, message });
  const { noun } = kind;
  const idFiles = indexBy(files, kind.id, routeId);
  const slugFiles = indexBy(files, kind.slug, routeSlug);
  const refFiles = kind.references ? indexBy(files, kind.references, routeId) : new Map<string, FileFacts>();
  const list = files.find((f) => f.route.kind === kind.list);
  const listItems = list?.items ?? [];

  // A file holds what its path names.
  for (const [id, f] of idFiles) {
    if (f.item && f.item.id !== id) {
      add(f.rel, `holds ${noun} "${f.item.id}", but its path names ${noun} "${id}"; ${REBUILD}`);
    }
  }
  for (const [slug, f] of slugFiles) {
    if (f.item && f.item.slug !== slug) {
      add(f.rel, `holds the ${noun} with slug "${f.item.slug}", but its path names slug "${slug}"; ${REBUILD}`);
    }
  }
  // Scoped, only the list's items in scope are looked at: an item sharing an id or a slug with one in scope is
  // in it too (audit-by-difference.ts), so a repeat among them is found, and the others passed before.
  const inScope = (item: ItemRef) => scope === undefined || scope.ids.has(item.id) || scope.slugs.has(item.slug);
  const seenIds = new Map<string, number>();
  const seenSlugs = new Map<string, number>();
  listItems.forEach((item, i) => {
    if (!inScope(item)) return;
    const a = seenIds.get(item.id);
    if (a !== undefined) add(list!.rel, `items.${i} repeats ${noun} "${item.id}" (already items.${a}); ${REBUILD}`);
    else seenIds.set(item.id, i);
    const b = seenSlugs.get(item.slug);
    if (b === undefined) seenSlugs.set(item.slug, i);
    else if (a === undefined) add(list!.rel, `items.${i} repeats the slug "${item.slug}" of items.${b}; ${REBUILD}`);
  });

  // Nothing unpublished or unknown is reachable by any path.
  if (exp) {
    const published = new Set(exp.published.map((p) => p.id));
    const publishedSlugs = new Set(exp.published.map((p) => p.slug));
    const hiddenById = new Map(exp.hidden.map((h) => [h.id, h]));
    const hiddenBySlug = new Map(exp.hidden.map((h) => [h.slug, h]));
    const whyId = (id: string): string | null => {
      if (published.has(id)) return null;
      const h = hiddenById.get(id);
      return h ? `which is ${h.state}` : `which does not exist in ${exp.source}`;
    };
    const whySlug = (slug: string): string | null => {
      if (publishedSlugs.has(slug)) return null;
      const h = hiddenBySlug.get(slug);
      if (h) return `whose slug belongs to ${h.state} ${noun} "${h.id}"`;
      return `whose slug "${slug}" no ${noun} of ${exp.source} has`;
    };
    const forbidden =
      `only published ${noun}s may be reachable by any path; ` +
      "remove it (a fresh cdsnap build does) and find out how it got here";
    const check = (rel: string, id: string, why: string | null) => {
      if (why) add(rel, `serves ${noun} "${id}", ${why}: ${forbidden}`);
    };
    for (const [id, f] of idFiles) check(f.rel, id, whyId(id) ?? whyId(f.item?.id ?? id));
    for (const [slug, f] of slugFiles) check(f.rel, f.item?.id ?? slug, whySlug(slug) ?? whyId(f.item?.id ?? ""));
    for (const [id, f] of refFiles) check(f.rel, id, whyId(id));
    listItems.forEach((item, i) => {
      if (!inScope(item)) return;
      const why = whyId(item.id) ?? whySlug(item.slug);
      if (why) add(list!.rel, `items.${i} is ${noun} "${item.id}", ${why}: ${forbidden}`);
    });
  }

  // Every item that must be reachable is reachable by every path, with the same data.
  const reach = exp
    ? exp.published.map((p) => ({ ...p, why: `is published in ${exp.source}`, fix: REBUILD }))
    : mentioned(kind, idFiles, slugFiles, list, add);
  const listIndex = new Map<string, number>();
  listItems.forEach((item, i) => {
    if (inScope(item)) listIndex.set(item.id, i);
  });
  for (const r of reach) {
    const idRel = fileOf(itemRoute(kind.id, orgId, r));
    const slugRel = fileOf(itemRoute(kind.slug, orgId, r));
    const idFile = idFiles.get(r.id);
    const slugFile = slugFiles.get(r.slug);
    if (!idFile) add(idRel, `is missing: ${noun} "${r.id}" ${r.why}, so it must be reachable by its id; ${r.fix}`);
    else if (exp && idFile.item && idFile.item.slug !== r.slug) {
      add(idRel, `gives ${noun} "${r.id}" the slug "${idFile.item.slug}", but in ${exp.source} its slug is "${r.slug}"; ${REBUILD}`);
    }
    if (!slugFile) {
      add(slugRel, `is missing: ${noun} "${r.id}" ${r.why}, so it must be reachable by its slug "${r.slug}"; ${r.fix}`);
    } else if (slugFile.item && slugFile.item.id !== r.id) {
      add(slugRel, `answers ${noun} "${slugFile.item.id}", but slug "${r.slug}" belongs to ${noun} "${r.id}"; ${REBUILD}`);
    } else if (idFile && slugFile.hash !== idFile.hash) {
      add(slugRel, `differs from ${idRel}: both paths must answer the same ${noun}; ${REBUILD}`);
    }
    if (kind.references) {
      const refRel = fileOf(itemRoute(kind.references, orgId, r));
      const refFile = refFiles.get(r.id);
      if (!refFile) add(refRel, `is missing: ${noun} "${r.id}" ${r.why}, so its references must be reachable; ${r.fix}`);
      else if (idFile?.item && refFile.hash !== idFile.item.referencesHash) {
        add(refRel, `differs from the references in ${idRel} (D3: [] when those are null); ${REBUILD}`);
      }
    }
    if (!list) continue;
    const i = listIndex.get(r.id);
    if (i === undefined) add(list.rel, `does not list ${noun} "${r.id}", which ${r.why}; ${r.fix}`);
    else if (idFile?.item && listItems[i]!.hash !== idFile.item.listHash) {
      add(list.rel, `items.${i} (${noun} "${r.id}") differs from ${idRel}: the list and the item must agree; ${REBUILD}`);
    }
  }
  return problems;
}

/**
 * Without sources, the items the tree mentions anywhere (id file, by-slug file,
 * list) must be reachable everywhere. Paths that disagree about an item's slug
 * are reported here.
 */
function mentioned(
  kind: Kind,
  idFiles: ReadonlyMap<string, FileFacts>,
  slugFiles: ReadonlyMap<string, FileFacts>,
  list: FileFacts | undefined,
  add: (where: string, message: string) => void,
): (ItemRef & { why: string; fix: string })[] {
  const items = new Map<string, ItemRef & { why: string; fix: string; at: string }>();
  const see = (id: string, slug: string, at: string) => {
    const known = items.get(id);
    if (!known) {
      items.set(id, { id, slug, at, why: `is served at ${at}`, fix: `a file was removed or placed by hand; ${REBUILD}` });
    } else if (known.slug !== slug) {
      add(
        at,
        `gives ${kind.noun} "${id}" the slug "${slug}", but ${known.at} gives it "${known.slug}": ` +
          `every path must answer the same ${kind.noun}; ${REBUILD}`,
      );
    }
  };
  for (const [id, f] of idFiles) see(f.item?.id ?? id, f.item?.slug ?? "", f.rel);
  for (const f of slugFiles.values()) if (f.item) see(f.item.id, f.item.slug, f.rel);
  for (const item of list?.items ?? []) see(item.id, item.slug, list!.rel);
  return [...items.values()];
}
