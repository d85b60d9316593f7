/**
 * The two callers of the audit: `cdsnap audit` on a published `--out`, and the
 * build on its next generation, before the swap (a failing audit is a failed
 * build, and the previous tree stays live).
 */
import { randomBytes, scrypt } from "node:crypto";
import { lstat, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { orNullOn } from "../errno.js";
import { AuditFailedError, UsageError } from "../errors.js";
import type { Publication } from "../model/shapes.js";
import type { OrgSnapshot, PostHead } from "../model/snapshot.js";
import { previewOutOf } from "../emit/tree-store.js";
import { auditByDifference } from "./audit-by-difference.js";
import { expectationsOf, readAuditInputs, type AuditExpectations, type OrgExpectation } from "./audit-inputs.js";
import { auditTree, sortProblems, type AuditResult, type Inspected } from "./audit-tree.js";
import { fileOf, orgInFolder } from "../api-paths.js";
import type { AuditedFile, AuditState, SecretsKey } from "../emit/build-state.js";
import type { FileTable } from "../emit/file-table.js";
import type { PreviousBuild } from "../emit/plan-generation.js";
import { needlesOf, redactSecrets } from "./scan-secrets.js";
import type { StoredSecret } from "./read-secrets.js";

export interface AuditOptions {
  db: string;
  out: string;
  /** The content folder; without it posts are checked for consistency within the tree only. */
  content?: string;
  /** The instant deciding what is scheduled (D1); defaults to the clock. */
  now?: Date;
  /** Audit the preview tree beside `out` (`<out>.preview`) by its rules instead of `out`. */
  preview?: boolean;
}

/** `--out` as a folder to read: the live generation's tree when it is cdsnap's link, else the folder itself. */
async function treeOf(out: string): Promise<string> {
  const info = await orNullOn(lstat(out), "ENOENT", "ENOTDIR");
  if (!info) throw new UsageError(`--out ${out} does not exist; build it first with cdsnap build`);
  // A link that leads nowhere, or round in a loop, is no folder either.
  const target = info.isSymbolicLink() ? await orNullOn(realpath(out), "ENOENT", "ENOTDIR", "ELOOP") : out;
  const dir = target ? await orNullOn(stat(target), "ENOENT", "ENOTDIR", "ELOOP") : null;
  if (!target || !dir?.isDirectory()) throw new UsageError(`--out ${out} is not a folder (or a link to one)`);
  return target;
}

/** Audits a published tree against the database (and the posts, with `content`). */
export async function auditOut(options: AuditOptions): Promise<AuditResult> {
  const out = path.resolve(options.out);
  const publication = options.preview ? "preview" : "public";
  const tree = await treeOf(options.preview ? previewOutOf(out) : out);
  const inputs = await readAuditInputs({ ...options, publication });
  const result = await auditTree(tree, inputs.expectations, inputs.secrets, { publication });
  // A source problem quotes the value it refuses, which may be a secret's.
  const sourceProblems = redactSecrets(inputs.problems, needlesOf(inputs.secrets).needles);
  const problems = sortProblems([...sourceProblems, ...result.problems]);
  return { ...result, ok: problems.length === 0, problems };
}

/**
 * The build's audit of its next generation, before the swap. Files the build
 * writes are inspected by its write stage as they are written (their bytes are
 * in hand: inspector.ts), and the audit stage reads what it found; files it
 * hard-links from the live generation reuse the facts the previous audit
 * recorded for the same bytes, unless a secret changed since. Then every rule
 * across files runs on the whole tree. A failure throws
 * {@link AuditFailedError}; a pass returns the facts for the next build.
 *
 * `audited` is the key of the secrets the live generation was audited against;
 * `key`, this build's (secretsKeyFor), when the caller started it early.
 */
export function createBuildAudit(
  snapshot: {
    orgs: readonly OrgSnapshot[];
    rowIds: ReadonlySet<string>;
    /**
     * What the live tree's audit expected of a part the build keeps as it is
     * (its blocks, or its posts, are not at hand): that part's expectations.
     */
    kept?: (orgId: string) => Partial<Pick<OrgExpectation, "blocks" | "posts">>;
  },
  postsByOrg: ReadonlyMap<string, readonly PostHead[]>,
  secrets: readonly StoredSecret[],
  now: number,
  audited: SecretsKey | null,
  key: SecretsKeyFor = secretsKeyFor(secrets, audited),
  publication: Publication = "public",
) {
  const expectations = expectationsOf(snapshot.orgs, snapshot.rowIds, postsByOrg, now, publication);
  if (snapshot.kept) expectations.orgs = expectations.orgs.map((exp) => ({ ...exp, ...snapshot.kept!(exp.orgId) }));
  const { needles } = needlesOf(secrets);

  const expected = new Map(expectations.orgs.filter((o) => o.posts !== null).map((o) => [o.orgId, o]));
  const { salt, secretsKey } = key;
  const secretsChanged = async () => audited?.secretsKey !== (await secretsKey);
  return {
    /** What the sources publish of each organization audited against them. */
    expected,
    /** What the write stage inspects each file it writes against. */
    inspection: { needles, orgIds: expectations.orgIds, publication },
    /**
     * Whether a secret was added, changed or removed since the live generation
     * was audited: a new secret may be a value the live files already hold, so
     * the tree is audited again even when no byte of it changes.
     */
    secretsChanged,
    /**
     * Audits the generation's tree, given every file it holds and each one's
     * SHA-256, what the write stage found inspecting the files it wrote, and
     * the files it wrote (true) and removed (false) against the live tree.
     * `keptOrgs` are the organizations of the live tree the build kept as they
     * are: with the facts of the live tree's audit at hand and the same
     * secrets, their files passed it as they are, and are not audited again,
     * unless the write proxy replaced the organization's file since.
     */
    async check(
      tree: string,
      previous: RecordedAudit | null,
      files: FileTable,
      inspected: ReadonlyMap<string, Inspected>,
      changes: ReadonlyMap<string, boolean>,
      keptOrgs: readonly string[] = [],
    ): Promise<AuditState> {
      const sha256Of = (rel: string) => files.get(rel)?.[0];
      const changed = await secretsChanged();
      const reusable = previous !== null && !changed;
      // A kept organization whose file the write proxy replaced is inspected, and the rules across files run again over it.
      const replaced = reusable ? keptOrgs.filter((orgId) => !previous.unchangedSinceAudit(fileOf({ kind: "organization", orgId }))) : [];
      // A planned organization whose live files passed the audit against recorded expectations is audited by difference.
      const byDifference = new Map<string, OrgExpectation>();
      if (reusable) {
        for (const exp of expectations.orgs) {
          const before = previous.expectedOf(exp.orgId);
          if (before && exp.posts !== null && before.posts !== null) byDifference.set(exp.orgId, before);
        }
      }
      // Reusable, the organizations audited whole are those planned and not by difference, and those replaced.
      const auditedWhole = [...expectations.orgs.map((exp) => exp.orgId).filter((orgId) => !byDifference.has(orgId)), ...replaced];
      const audited = reusable ? auditedWhole.flatMap((orgId) => [...files.of(orgId).keys()]) : [...files.all().keys()];
      // The recorded facts of the organizations audited whole, only: a carried organization's are never read.
      const reuse = reusable ? previous.facts(new Set(audited.map(orgInFolder))) : undefined;
      const whole: AuditExpectations = { orgIds: expectations.orgIds, orgs: expectations.orgs.filter((o) => !byDifference.has(o.orgId)) };
      const result = await auditTree(tree, whole, secrets, { inspected, previous: reuse, sha256Of, files: audited, publication });
      const problems = [...result.problems];
      const factsFound = [...result.facts];
      const changesOf = new Map<string, string[]>();
      for (const rel of byDifference.size > 0 ? changes.keys() : []) {
        const orgId = orgInFolder(rel);
        const list = changesOf.get(orgId);
        if (list) list.push(rel);
        else changesOf.set(orgId, [rel]);
      }
      for (const exp of expectations.orgs) {
        const before = byDifference.get(exp.orgId);
        if (!before || !previous) continue;
        const orgChanges = changesOf.get(exp.orgId) ?? [];
        const difference = await auditByDifference(exp.orgId, {
          tree,
          exp,
          before,
          files,
          // The organization file too: the write proxy may have replaced it since the live tree's audit.
          changed: [...new Set([...orgChanges, fileOf({ kind: "organization", orgId: exp.orgId })])],
          inspected,
          recorded: (rels) => previous.factsAt(rels),
          orgIds: expectations.orgIds,
          needles,
          publication,
        });
        problems.push(...difference.problems);
        factsFound.push(...difference.facts);
      }
      if (problems.length > 0) {
        // A file with the bytes the live generation was audited with, failing now: the live tree holds it too.
        const recorded = changed && previous ? previous.facts(new Set(problems.map((p) => orgInFolder(p.where)))) : undefined;
        const liveHoldsOne = problems.some((p) => {
          const live = recorded?.get(p.where);
          return live !== undefined && live.sha256 === sha256Of(p.where);
        });
        // A path or an id may be the secret found: what the report prints must not hold it.
        throw new AuditFailedError(sortProblems(redactSecrets(problems, needles)), liveHoldsOne, publication);
      }
      const facts: AuditState["files"] = new Map();
      for (const fileFacts of factsFound) {
        const sha256 = sha256Of(fileFacts.rel);
        if (sha256) facts.set(fileFacts.rel, { sha256, facts: fileFacts });
      }
      return { salt, secretsKey: await secretsKey, files: facts, whole: !reusable, expected };
    },
  };
}

/** What the live generation's audit recorded, for a build that may reuse it. */
export interface RecordedAudit {
  /** The recorded facts of the files of these organizations. */
  facts: (orgIds: Iterable<string>) => ReadonlyMap<string, AuditedFile>;
  /** The recorded facts of these files. */
  factsAt: (rels: readonly string[]) => ReadonlyMap<string, AuditedFile>;
  /** What the sources published for an organization when the live tree was audited. */
  expectedOf: (orgId: string) => OrgExpectation | undefined;
  /** Whether a file of a kept organization has the bytes it had when its facts were recorded. */
  unchangedSinceAudit: (rel: string) => boolean;
}

/**
 * What the live generation's audit recorded, when its state is trusted: then
 * every file the state lists has facts recorded for the bytes it lists.
 */
export function recordedAudit(previous: PreviousBuild, files: FileTable): RecordedAudit | null {
  const { state } = previous;
  if (!previous.trusted || state.audited === null) return null;
  return {
    facts: state.auditOf,
    factsAt: state.auditAt,
    expectedOf: state.expectedOf,
    unchangedSinceAudit: (rel) => state.files.get(rel)?.[0] === files.get(rel)?.[0],
  };
}

export interface SecretsKeyFor {
  salt: string;
  secretsKey: Promise<string>;
}

/**
 * Starts deriving the key of `secrets` (on the thread pool: the build goes on
 * meanwhile), with the salt of the live generation's key, so that the same
 * secrets give the same key.
 */
export function secretsKeyFor(secrets: readonly StoredSecret[], audited: SecretsKey | null): SecretsKeyFor {
  const salt = audited?.salt ?? randomBytes(16).toString("hex");
  const secretsKey = secretsKeyOf(secrets, salt);
  // Awaited by the audit; a failure is its to report, not an unhandled rejection meanwhile.
  secretsKey.catch(() => undefined);
  return { salt, secretsKey };
}

/**
 * Tells whether the secrets changed since the last audit without keeping
 * anything a secret could be recovered from: a salted scrypt of all of them,
 * as for a stored password (a plain hash of a weak password is guessable).
 */
function secretsKeyOf(secrets: readonly StoredSecret[], salt: string): Promise<string> {
  const joined = secrets.map((s) => `${s.orgId}\u0000${s.name}\u0000${s.value}`).join("\u0001");
  return new Promise((resolve, reject) =>
    scrypt(joined, salt, 32, { N: 16384, r: 8, p: 1 }, (error, key) => (error ? reject(error) : resolve(key.toString("hex")))),
  );
}
