/**
 * The one reader of every source: the organizations' rows, each validated, and
 * the posts, each parsed and checked against its organization, with every
 * problem a build refuses. The build, `cdsnap check` and `cdsnap audit` all
 * start here, so they can never disagree on what the sources say.
 */
import { openContractDatabase } from "../db/contract-schema.js";
import type { Db } from "../db/open.js";
import { readSnapshotRows, validateSnapshot, type OrgRows, type SnapshotRead, type SnapshotRows } from "../db/read-snapshot.js";
import type { Problem, SourceWarning } from "../errors.js";
import type { RecordSpool, UnchangedPost } from "../model/snapshot.js";
import { crossCheck } from "./cross-check.js";
import { readPosts, type PostEdit, type PostsRead, type PreviousPosts } from "./read-posts.js";

export interface LoadSourcesOptions {
  db: string;
  /** The content folder; without it only the database is read. */
  content?: string;
  /** Only these organizations, and only their content folders (D14). */
  orgs?: readonly string[];
  /** What the previous build recorded of the posts: a post is not parsed again while its file's bytes are the same. */
  previous?: Omit<PreviousPosts, "kept" | "candidates" | "needsRecord" | "inPlace"> & {
    /**
     * The parts of an organization kept as the last build left them, given its
     * rows as stored and the digest of its posts' bytes when each has its
     * stored bytes (else null):
     * kept posts are not read, kept rows not validated (the build that
     * recorded them validated the same).
     */
    kept?: (rows: OrgRows, content: string | null) => { rows: boolean; posts: boolean };
    /** Whether an unchanged post of the organization with these rows is rendered again. */
    needsRecord?: (rows: OrgRows, post: UnchangedPost) => boolean;
    /** Whether the edited posts of the organization with these rows keep their places (PreviousPosts.inPlace). */
    inPlace?: (rows: OrgRows, edits: readonly PostEdit[]) => boolean;
  };
  bodyBudget?: number;
  /** Where each post's record waits once it is parsed (a build's): then a post read is held as its head. */
  spool?: RecordSpool;
}

export interface LoadedSources<T> {
  /**
   * Every organization read, validated; but those kept whole (in `rowsKept`
   * and posts.kept), which are left out, and the blocks of the others in
   * `rowsKept`, which are left empty.
   */
  snapshot: SnapshotRead;
  /** The organizations whose rows part is kept as the last build left it. */
  rowsKept: Set<string>;
  /** Every organization's rows as stored, in the order read. */
  rows: SnapshotRows;
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
  let rows: SnapshotRows;
  let extra: T;
  try {
    rows = readSnapshotRows(db, options.orgs);
    extra = alsoRead ? alsoRead(db) : (undefined as T);
  } finally {
    db.close();
  }
  const missing = rows.missing.map((id) => ({ where: `--org ${id}`, message: "no organization has this id" }));
  if (options.content === undefined) {
    const snapshot = validateSnapshot(rows);
    return { snapshot, rowsKept: new Set(), rows, posts: null, problems: [...snapshot.problems, ...missing], warnings: [], extra };
  }

  const byId = new Map(rows.orgs.map((org) => [org.id, org]));
  const given = options.previous;
  const previous: PreviousPosts | undefined = given && {
    identity: given.identity,
    listing: given.listing,
    heads: given.heads,
    headsAt: given.headsAt,
    record: given.record,
    candidates: [...byId.keys()],
    kept: given.kept && ((orgId, content) => given.kept!(byId.get(orgId)!, content).posts),
    // A folder no organization has fails the build: its posts are taken whole, like changed ones.
    needsRecord: given.needsRecord && ((orgId, post) => !byId.has(orgId) || given.needsRecord!(byId.get(orgId)!, post)),
    inPlace: given.inPlace && ((orgId, edits) => byId.has(orgId) && given.inPlace!(byId.get(orgId)!, edits)),
  };
  const posts = await readPosts(options.content, options.orgs, { previous, bodyBudget: options.bodyBudget, spool: options.spool });
  const rowsKept = new Set(given?.kept ? rows.orgs.filter((org) => given.kept!(org, null).rows).map((org) => org.id) : []);
  const keptWhole = new Set([...rowsKept].filter((orgId) => posts.kept.has(orgId)));
  const snapshot = validateSnapshot(rows, { skip: keptWhole, blocksKept: rowsKept });
  const problems: Problem[] = [...snapshot.problems, ...missing, ...posts.problems];
  if (options.orgs === undefined) {
    for (const folder of posts.byOrg.keys()) {
      if (!snapshot.rowIds.has(folder)) {
        problems.push({ where: `${folder}/`, message: `no organization has the id "${folder}"; posts live in <content>/<orgId>/` });
      }
    }
  }
  for (const org of snapshot.orgs) problems.push(...crossCheck(org, posts.byOrg.get(org.id) ?? []));
  return { snapshot, rowsKept, rows, posts, problems, warnings: posts.warnings, extra };
}
