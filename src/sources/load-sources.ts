/**
 * The one reader of every source: the organizations' rows, each validated, and
 * the posts, each parsed and checked against its organization, with every
 * problem a build refuses. The build, `cdsnap check` and `cdsnap audit` all
 * start here, so they can never disagree on what the sources say.
 */
import { openContractDatabase } from "../db/contract-schema.js";
import type { Db } from "../db/open.js";
import { readSnapshot, type SnapshotRead } from "../db/read-snapshot.js";
import type { Problem, SourceWarning } from "../errors.js";
import type { OrgSnapshot } from "../model/snapshot.js";
import { crossCheck } from "./cross-check.js";
import { readPosts, type PostIdentity, type PostsRead, type PreviousPosts } from "./read-posts.js";

export interface LoadSourcesOptions {
  db: string;
  /** The content folder; without it only the database is read. */
  content?: string;
  /** Only these organizations, and only their content folders (D14). */
  orgs?: readonly string[];
  /** What the previous build recorded of the posts: records are reused while a file's bytes are the same. */
  previous?: Omit<PreviousPosts, "unchanged" | "candidates"> & {
    /** Whether an organization whose every post has its stored bytes is unchanged as a whole (then it is not read). */
    unchanged?: (org: OrgSnapshot, posts: readonly PostIdentity[]) => boolean;
  };
  bodyBudget?: number;
}

export interface LoadedSources<T> {
  snapshot: SnapshotRead;
  /** Null when no content folder was given. */
  posts: PostsRead | null;
  /** Everything a build refuses, database and posts alike, unsorted. */
  problems: Problem[];
  /** What a build accepts but reports (posts.warnings), unsorted. */
  warnings: SourceWarning[];
  /** What `alsoRead` read from the same connection. */
  extra: T;
}

/**
 * Reads and validates the sources. `alsoRead` reads more from the same
 * read-only connection (the audit's secrets: no other code selects them).
 */
export async function loadSources<T = undefined>(
  options: LoadSourcesOptions,
  alsoRead?: (db: Db) => T,
): Promise<LoadedSources<T>> {
  const db = openContractDatabase(options.db, { readonly: true });
  let snapshot: SnapshotRead;
  let extra: T;
  try {
    snapshot = readSnapshot(db, options.orgs);
    extra = alsoRead ? alsoRead(db) : (undefined as T);
  } finally {
    db.close();
  }
  const problems: Problem[] = [...snapshot.problems];
  for (const id of snapshot.missing) problems.push({ where: `--org ${id}`, message: "no organization has this id" });
  if (options.content === undefined) return { snapshot, posts: null, problems, warnings: [], extra };

  const orgs = new Map(snapshot.orgs.map((org) => [org.id, org]));
  const given = options.previous;
  const previous: PreviousPosts | undefined = given && {
    identity: given.identity,
    records: given.records,
    candidates: [...orgs.keys()],
    unchanged: given.unchanged && ((orgId, posts) => given.unchanged!(orgs.get(orgId)!, posts)),
  };
  const posts = await readPosts(options.content, options.orgs, { previous, bodyBudget: options.bodyBudget });
  problems.push(...posts.problems);
  if (options.orgs === undefined) {
    for (const folder of posts.byOrg.keys()) {
      if (!snapshot.rowIds.has(folder)) {
        problems.push({ where: `${folder}/`, message: `no organization has the id "${folder}"; posts live in <content>/<orgId>/` });
      }
    }
  }
  for (const org of snapshot.orgs) if (!posts.unchanged.has(org.id)) problems.push(...crossCheck(org, posts.byOrg.get(org.id) ?? []));
  return { snapshot, posts, problems, warnings: posts.warnings, extra };
}
