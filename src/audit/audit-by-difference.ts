/**
 * The audit of one organization by difference, for a build whose live tree
 * passed the audit with the same secrets: only the files this build changed
 * are inspected, and the rules across files run only for the blocks and posts
 * those changes, or a change of what the sources publish, can touch. Every
 * other item passed them before, and nothing they depend on changed.
 *
 * The items in scope are found from both sides of every change: the ids and
 * slugs a changed file's path names and its old and new bytes hold, the items
 * a list gained, lost or changed, and those whose expectation (published or
 * not, under which slug) differs from the recorded one; then, until nothing
 * is added, the slug of each id in scope and the id of each slug, as the
 * expectations, the files and the lists pair them. The facts of the files of
 * those items, and of the organization's own files and lists, are all the
 * rules read: the recorded ones for files that did not change. The pages of
 * the lists are checked whole when a list, the categories or a page changed.
 *
 * test/audit/audit-by-difference.test.ts holds it to finding exactly what a
 * full audit of the tree finds.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileOf, routeOfFile, type Route } from "../api-paths.js";
import type { AuditedFile } from "../emit/build-state.js";
import type { FileTable } from "../emit/file-table.js";
import type { Problem } from "../errors.js";
import { pageCount } from "../render/pages.js";
import { itemFileKinds, itemRoute, kindOf, kindsWith, ORG_FILE_KINDS, ROUTES } from "../route-table.js";
import type { AuditExpectations, ItemExpectation, OrgExpectation } from "./audit-inputs.js";
import { inspectBytes, type Inspected } from "./audit-tree.js";
import { scanForSecrets, type SecretNeedle } from "./scan-secrets.js";
import type { Publication } from "../model/shapes.js";
import { checkTree, type FileFacts, type ItemScope, type ListItemFacts } from "./tree-rules.js";

export interface DifferenceInput {
  tree: string;
  exp: OrgExpectation;
  /** What the sources published when the live tree was audited. */
  before: OrgExpectation;
  /** Every file of the new generation, with its SHA-256. */
  files: FileTable;
  /** The organization's files this build wrote (true) or removed (false), and its organization file. */
  changed: readonly string[];
  inspected: ReadonlyMap<string, Inspected>;
  /** The facts the live tree's audit recorded for these files. */
  recorded: (rels: readonly string[]) => ReadonlyMap<string, AuditedFile>;
  orgIds: ReadonlySet<string>;
  needles: readonly SecretNeedle[];
  publication: Publication;
}

export interface DifferenceResult {
  problems: Problem[];
  /** The facts of every changed file the new generation holds. */
  facts: FileFacts[];
}

type Noun = "block" | "post";
const NOUNS: readonly Noun[] = ["block", "post"];
const FILE_KINDS = { block: itemFileKinds("block"), post: itemFileKinds("post") };
const LISTS = { block: kindOf("block", "list"), post: kindOf("post", "list") };
const nounOf = (route: Route): Noun | null => {
  const { entity } = ROUTES[route.kind];
  return entity === "block" || entity === "post" ? entity : null;
};

/** The ids and slugs in scope, and whether any was added since `grew` was last reset. */
class Scope implements ItemScope {
  readonly ids = new Set<string>();
  readonly slugs = new Set<string>();
  grew = false;
  add(id: string | undefined, ...slugs: (string | undefined)[]): void {
    if (id !== undefined && !this.ids.has(id)) {
      this.ids.add(id);
      this.grew = true;
    }
    for (const slug of slugs) {
      if (slug !== undefined && !this.slugs.has(slug)) {
        this.slugs.add(slug);
        this.grew = true;
      }
    }
  }
  /** Adds the item's id and slug when either is in scope. */
  pair(item: { id: string; slug: string }): void {
    if (this.ids.has(item.id) || this.slugs.has(item.slug)) this.add(item.id, item.slug);
  }
}

export async function auditByDifference(orgId: string, input: DifferenceInput): Promise<DifferenceResult> {
  const { files, exp, before } = input;
  const problems: Problem[] = [];
  const current = new Map<string, FileFacts>();
  // The changed files the generation holds: inspected as they were written, or read now (an organization file
  // the write proxy replaced), their paths searched for secrets.
  const present = input.changed.filter((rel) => files.get(rel) !== undefined);
  const previous = input.recorded([...input.changed, ...ORG_FILE_KINDS.map((kind) => fileOf({ kind, orgId } as Route))]);
  for (const rel of present) {
    problems.push(...scanForSecrets(rel, Buffer.from(rel, "utf8"), input.needles, true));
    const sha256 = files.get(rel)![0];
    const known = previous.get(rel);
    const inspected =
      input.inspected.get(rel) ??
      (known?.sha256 === sha256 ? { problems: [], facts: known.facts } : inspectBytes(rel, await readFile(path.join(input.tree, rel)), input.orgIds, input.needles, input.publication));
    problems.push(...inspected.problems);
    if (inspected.facts) current.set(rel, inspected.facts);
  }
  const changed = new Set(input.changed);
  /** The facts of a file of the new generation: this build's, or the recorded ones of a file it did not change. */
  const factsOf = (rels: readonly string[]): Map<string, FileFacts> => {
    const out = new Map<string, FileFacts>();
    const unchanged = rels.filter((rel) => files.get(rel) !== undefined && !changed.has(rel));
    const stored = input.recorded(unchanged);
    for (const rel of rels) {
      const facts = changed.has(rel) ? current.get(rel) : stored.get(rel)?.facts;
      if (facts) out.set(rel, facts);
    }
    return out;
  };

  const orgFiles = factsOf(ORG_FILE_KINDS.map((kind) => fileOf({ kind, orgId } as Route)));
  const scopes = { block: new Scope(), post: new Scope() };
  for (const rel of input.changed) {
    for (const facts of [current.get(rel), previous.get(rel)?.facts]) {
      const route = facts?.route ?? routeOfFile(rel);
      const noun = route ? nounOf(route) : null;
      if (!route || !noun) continue;
      scopes[noun].add("id" in route ? route.id : undefined, "slug" in route ? route.slug : undefined);
      scopes[noun].add(facts?.item?.id, facts?.item?.slug);
    }
  }
  for (const noun of NOUNS) {
    const scope = scopes[noun];
    const listRel = fileOf({ kind: LISTS[noun], orgId } as Route);
    if (changed.has(listRel)) {
      const items = current.get(listRel)?.items ?? [];
      // An id or a slug the list repeats is in scope: the maps below keep one item of each.
      const ids = new Set<string>();
      const slugs = new Set<string>();
      for (const item of items) {
        if (ids.has(item.id) || slugs.has(item.slug)) scope.add(item.id, item.slug);
        ids.add(item.id);
        slugs.add(item.slug);
      }
      const after = new Map(items.map((item) => [item.id, item]));
      const was = new Map((previous.get(listRel)?.facts.items ?? []).map((item) => [item.id, item]));
      for (const [id, item] of after) {
        const old = was.get(id);
        if (old?.slug !== item.slug || old.hash !== item.hash) scope.add(id, item.slug, old?.slug);
      }
      for (const [id, item] of was) if (!after.has(id)) scope.add(id, item.slug);
    }
    // The recorded expectations themselves (a part the build kept): nothing differs.
    if (expectationsOf(noun, exp, before).length === 1) continue;
    const now = expectationOf(noun === "block" ? exp.blocks : exp.posts);
    const then = expectationOf(noun === "block" ? before.blocks : before.posts);
    for (const [id, state] of now) if (then.get(id) !== state) scope.add(id, slugIn(state), slugIn(then.get(id)));
    for (const [id, state] of then) if (!now.has(id)) scope.add(id, slugIn(state));
  }

  // Until nothing is added: each id in scope brings its slug, each slug its id, as the files, lists and expectations pair them.
  const itemFacts = new Map<string, FileFacts>();
  do {
    for (const noun of NOUNS) scopes[noun].grew = false;
    for (const noun of NOUNS) {
      const scope = scopes[noun];
      const rels = itemRels(orgId, noun, scope).filter((rel) => !itemFacts.has(rel));
      for (const [rel, facts] of factsOf(rels)) itemFacts.set(rel, facts);
      for (const facts of itemFacts.values()) if (facts.item && nounOf(facts.route) === noun) scope.pair(facts.item);
      for (const item of orgFiles.get(fileOf({ kind: LISTS[noun], orgId } as Route))?.items ?? []) scope.pair(item);
      for (const expectation of expectationsOf(noun, exp, before)) {
        for (const item of [...(expectation?.published ?? []), ...(expectation?.hidden ?? [])]) scope.pair(item);
      }
    }
  } while (NOUNS.some((noun) => scopes[noun].grew));

  const pageFacts = pagesInScope(orgId, { now: orgFiles, before: previous }, input.changed, factsOf);
  const scoped: OrgExpectation = { ...exp, blocks: within(exp.blocks, scopes.block), posts: exp.posts && within(exp.posts, scopes.post) };
  const expectations: AuditExpectations = { orgIds: input.orgIds, orgs: [scoped] };
  const facts = [...orgFiles.values(), ...[...itemFacts.values()].filter((f) => !orgFiles.has(f.rel)), ...(pageFacts?.values() ?? [])];
  const scope = { blocks: scopes.block, posts: scopes.post, pages: pageFacts !== null };
  problems.push(...checkTree(facts, expectations, new Map([[orgId, scope]])));
  return { problems, facts: [...current.values()] };
}

const PAGE_KINDS = kindsWith("post", "page");
const isPage = (rel: string) => {
  const route = routeOfFile(rel);
  return route !== null && PAGE_KINDS.includes(route.kind);
};

/**
 * The facts of every page the rules must see, or null when no change can
 * touch a page (neither the contents list, the categories list nor a page
 * changed: the pages passed before, and what they are held to is the same).
 * Otherwise every page the lists call for now or called for before (a page
 * past the new last one, or of a category gone, must have gone too), and
 * every page this build wrote or removed.
 */
function pagesInScope(
  orgId: string,
  lists: { now: ReadonlyMap<string, FileFacts>; before: ReadonlyMap<string, AuditedFile> },
  changed: readonly string[],
  factsOf: (rels: readonly string[]) => Map<string, FileFacts>,
): Map<string, FileFacts> | null {
  const listRel = fileOf({ kind: LISTS.post, orgId } as Route);
  const categoriesRel = fileOf({ kind: kindOf("category", "list"), orgId } as Route);
  const changedPages = changed.filter(isPage);
  if (changedPages.length === 0 && !changed.includes(listRel) && !changed.includes(categoriesRel)) return null;
  const firstRel = fileOf({ kind: "contentsPage", orgId, page: "1" } as Route);
  const limits = [factsOf([firstRel]).get(firstRel), lists.before.get(firstRel)?.facts].flatMap((f) => f?.pagination?.limit ?? []);
  const rels = new Set([firstRel, ...changedPages]);
  const sides = [lists.now.get(listRel), lists.before.get(listRel)?.facts];
  const slugs = new Set([lists.now.get(categoriesRel), lists.before.get(categoriesRel)?.facts].flatMap((f) => f?.slugs ?? []));
  const most = (keep: (item: ListItemFacts) => boolean) => Math.max(0, ...sides.map((f) => f?.items?.filter(keep).length ?? 0));
  for (const limit of limits) {
    const series = (total: number, relOf: (page: number) => string) => {
      for (let page = 1; page <= pageCount(total, limit); page++) rels.add(relOf(page));
    };
    series(most(() => true), (page) => fileOf({ kind: "contentsPage", orgId, page: String(page) } as Route));
    for (const slug of slugs) {
      series(most((item) => item.category === slug), (page) => fileOf({ kind: "categoryContentsPage", orgId, slug, page: String(page) } as Route));
    }
  }
  return factsOf([...rels]);
}

/** What the sources publish of a noun now and did before; one when the build kept the recorded one. */
function expectationsOf(noun: Noun, exp: OrgExpectation, before: OrgExpectation): (ItemExpectation | null)[] {
  const sides = noun === "block" ? [exp.blocks, before.blocks] : [exp.posts, before.posts];
  return sides[0] === sides[1] ? [sides[0]!] : sides;
}

/** Each item's expectation as one comparable string: published or its hidden state, and its slug. */
function expectationOf(items: ItemExpectation | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of items?.published ?? []) out.set(item.id, `published\u0000${item.slug}`);
  for (const item of items?.hidden ?? []) out.set(item.id, `${item.state}\u0000${item.slug}`);
  return out;
}

const slugIn = (state: string | undefined) => state?.slice(state.indexOf("\u0000") + 1);

/** The files of the items in scope: by id, by slug, and (posts) references. */
function itemRels(orgId: string, noun: Noun, scope: ItemScope): string[] {
  const rels: string[] = [];
  for (const kind of FILE_KINDS[noun]) {
    for (const key of ROUTES[kind].role === "bySlug" ? scope.slugs : scope.ids) rels.push(fileOf(itemRoute(kind, orgId, { id: key, slug: key })));
  }
  return rels;
}

function within(items: ItemExpectation, scope: ItemScope): ItemExpectation {
  const keep = (item: { id: string; slug: string }) => scope.ids.has(item.id) || scope.slugs.has(item.slug);
  return { ...items, published: items.published.filter(keep), hidden: items.hidden.filter(keep) };
}
