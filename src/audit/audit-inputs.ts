/**
 * What the audit holds a tree against: per organization, which blocks, posts
 * and categories are published (and so must be reachable by every path the
 * interface gives them) and which are not (and so must be reachable by none).
 *
 * The build hands in the snapshot and posts it already read; `cdsnap audit`
 * reads them here, with the build's own readers and validation. What may be
 * published is the audit's own reading of D1 (publication.ts), never the
 * renderer's: a renderer bug must not be its own judge.
 */
import type { Problem } from "../errors.js";
import type { OrgSnapshot, PostHead } from "../model/snapshot.js";
import { loadSources } from "../sources/load-sources.js";
import type { Publication } from "../model/shapes.js";
import { hiddenStateOf } from "./publication.js";
import { readSecrets, type StoredSecret } from "./read-secrets.js";

export interface ItemRef {
  id: string;
  slug: string;
}

export interface HiddenItem extends ItemRef {
  /** Why it is not published: draft, archived or scheduled. */
  state: string;
}

export interface ItemExpectation {
  published: ItemRef[];
  hidden: HiddenItem[];
  /** Where the truth came from, for messages: "the database", "the content sources". */
  source: string;
}

export interface OrgExpectation {
  orgId: string;
  categoryIds: string[];
  blocks: ItemExpectation;
  /** null: no post sources were given; posts are checked for consistency within the tree only. */
  posts: ItemExpectation | null;
}

export interface AuditExpectations {
  /** Every organization with a database row: a file of any other organization is a stray. */
  orgIds: ReadonlySet<string>;
  /**
   * The organizations checked against their sources. An organization of the
   * tree not listed here (one an `--org` build carried over) is checked for
   * consistency within the tree only.
   */
  orgs: OrgExpectation[];
}

/**
 * The expectations of the given organizations; `postsByOrg` undefined means
 * no post sources. Of the preview tree, every post but an archived one is
 * expected, and blocks as in the public tree.
 */
export function expectationsOf(
  orgs: readonly OrgSnapshot[],
  orgIds: ReadonlySet<string>,
  postsByOrg: ReadonlyMap<string, readonly PostHead[]> | undefined,
  now: number,
  publication: Publication = "public",
): AuditExpectations {
  return {
    orgIds,
    orgs: orgs.map((org) => {
      const blocks: ItemExpectation = { published: [], hidden: [], source: "the database" };
      for (const b of org.blocks) {
        if (b.status === "published") blocks.published.push({ id: b.id, slug: b.slug });
        else blocks.hidden.push({ id: b.id, slug: b.slug, state: b.status });
      }
      let posts: ItemExpectation | null = null;
      if (postsByOrg) {
        posts = { published: [], hidden: [], source: "the content sources" };
        for (const p of postsByOrg.get(org.id) ?? []) {
          const state = publication === "preview" ? (p.meta.status === "archived" ? "archived" : null) : hiddenStateOf(p.meta, now);
          if (state === null) posts.published.push({ id: p.meta.id, slug: p.meta.slug });
          else posts.hidden.push({ id: p.meta.id, slug: p.meta.slug, state });
        }
      }
      return { orgId: org.id, categoryIds: org.categories.map((c) => c.id), blocks, posts };
    }),
  };
}

export interface AuditInputs {
  expectations: AuditExpectations;
  secrets: StoredSecret[];
  /** Sources the build would refuse: the audit cannot vouch for a tree against them. */
  problems: Problem[];
}

export interface ReadAuditInputsOptions {
  db: string;
  /** The content folder; without it posts are checked for consistency within the tree only. */
  content?: string;
  /** The instant deciding what is scheduled (D1); defaults to the clock. */
  now?: Date;
  /** Which tree the expectations are of; default the public one. */
  publication?: Publication;
}

/** Reads everything `cdsnap audit` needs from the database (and the posts, when given). */
export async function readAuditInputs(options: ReadAuditInputsOptions): Promise<AuditInputs> {
  const now = (options.now ?? new Date()).getTime();
  const sources = await loadSources({ db: options.db, content: options.content }, readSecrets);
  const problems = sources.problems.map((p) => ({
    where: p.where,
    message: `${p.message} (the build refuses this, so the audit cannot vouch for the tree; fix it and rebuild)`,
  }));
  const { snapshot } = sources;
  return { expectations: expectationsOf(snapshot.orgs, snapshot.rowIds, sources.posts?.byOrg, now, options.publication), secrets: sources.extra, problems };
}
