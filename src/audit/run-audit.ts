/**
 * The two callers of the audit: `cdsnap audit` on a published `--out`, and the
 * build on its next generation, before the swap (a failing audit is a failed
 * build, and the previous tree stays live).
 */
import { lstat, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { AuditFailedError, UsageError } from "../errors.js";
import type { OrgSnapshot, PostRecord } from "../model/snapshot.js";
import { expectationsOf, readAuditInputs } from "./audit-inputs.js";
import { auditTree, sortProblems, type AuditResult } from "./audit-tree.js";
import type { StoredSecret } from "./read-secrets.js";

export interface AuditOptions {
  db: string;
  out: string;
  /** The content folder; without it posts are checked for consistency within the tree only. */
  content?: string;
  /** The instant deciding what is scheduled (D1); defaults to the clock. */
  now?: Date;
}

/** `--out` as a folder to read: the live generation's tree when it is cdsnap's link, else the folder itself. */
async function treeOf(out: string): Promise<string> {
  const info = await lstat(out).catch(() => null);
  if (!info) throw new UsageError(`--out ${out} does not exist; build it first with cdsnap build`);
  const target = info.isSymbolicLink() ? await realpath(out).catch(() => null) : out;
  const dir = target ? await stat(target).catch(() => null) : null;
  if (!target || !dir?.isDirectory()) throw new UsageError(`--out ${out} is not a folder (or a link to one)`);
  return target;
}

/** Audits a published tree against the database (and the posts, with `content`). */
export async function auditOut(options: AuditOptions): Promise<AuditResult> {
  const tree = await treeOf(path.resolve(options.out));
  const inputs = await readAuditInputs(options);
  const result = await auditTree(tree, inputs.expectations, inputs.secrets);
  const problems = sortProblems([...inputs.problems, ...result.problems]);
  return { ...result, ok: problems.length === 0, problems };
}

/**
 * The build's pre-swap check: audits the complete next generation against the
 * sources the build already read, and throws {@link AuditFailedError} with every
 * problem when it is not safe to publish. Only the rebuilt organizations are
 * held against their sources; the whole tree is checked for strays and secrets.
 */
export function auditBeforeSwap(
  snapshot: { orgs: readonly OrgSnapshot[]; rowIds: ReadonlySet<string> },
  postsByOrg: ReadonlyMap<string, readonly PostRecord[]>,
  secrets: readonly StoredSecret[],
  now: number,
): (gen: { tree: string }) => Promise<void> {
  const expectations = expectationsOf(snapshot.orgs, snapshot.rowIds, postsByOrg, now);
  return async (gen) => {
    const result = await auditTree(gen.tree, expectations, secrets);
    if (!result.ok) throw new AuditFailedError(result.problems);
  };
}
