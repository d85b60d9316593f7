/**
 * The error family. Every failure a person can meet has a stable `code`; the
 * server turns these into HTTP answers in one place (server/respond.ts), the CLI
 * into a message and an exit code (cli/main.ts). Anything else is a bug.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class CdsnapError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 500,
    readonly details?: ErrorDetail[],
    /** Headers the HTTP answer must carry (Allow on 405, Retry-After on 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "CdsnapError";
  }
}

/** A source problem found by the build: where (file:line, or table and key) and what. */
export interface Problem {
  where: string;
  message: string;
}

/** Something in the sources a build accepts but a person should look at; `rule` names it, as lint rules are named. */
export interface SourceWarning extends Problem {
  rule: string;
}

export class InvalidSourcesError extends CdsnapError {
  constructor(readonly problems: Problem[]) {
    super(
      "invalid_sources",
      `the sources have ${problems.length} problem${problems.length === 1 ? "" : "s"}; nothing was written`,
    );
    this.name = "InvalidSourcesError";
  }
}

/**
 * The audit found the tree unsafe to publish (a leaked secret, an unpublished
 * item, a stray or broken file). The build throws it from its pre-swap check,
 * so the previous tree stays live.
 */
export class AuditFailedError extends CdsnapError {
  /**
   * `liveHoldsOne`: a failing file is unchanged from the live tree, which passed its audit before the secrets changed.
   * `tree`: which tree failed; the preview tree is built after the public one, which was published by then.
   */
  constructor(
    readonly problems: Problem[],
    liveHoldsOne = false,
    tree: "public" | "preview" = "public",
  ) {
    super(
      "audit_failed",
      (tree === "preview"
        ? `the audit of the new preview tree found ${problems.length} problem${problems.length === 1 ? "" : "s"}; ` +
          "the public tree was built, the preview tree was not published and the previous one is still served"
        : `the audit of the new tree found ${problems.length} problem${problems.length === 1 ? "" : "s"}; ` +
          "nothing was published and the previous tree is still served") +
        (liveHoldsOne
          ? ", though it holds such a file too: the stored secrets changed since it was audited; fix the sources and rebuild now"
          : ""),
    );
    this.name = "AuditFailedError";
  }
}

/** A problem with how cdsnap was called or configured (a missing folder, a bad flag). */
export class UsageError extends CdsnapError {
  constructor(message: string) {
    super("usage", message);
    this.name = "UsageError";
  }
}

/**
 * What the machine refused, by the code of a failed system call: a full or
 * read-only disk, a file without permission, a failing device. The operator's
 * to fix, not a bug to report; every other code is unexpected.
 */
const REFUSALS: Readonly<Record<string, string>> = {
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EIO: "the device failed to read or write (I/O error)",
};

/** The refusal a system error stands for, with the file it concerns, or undefined for any other error. */
export function systemRefusal(error: unknown): { code: string; message: string } | undefined {
  const e = error as NodeJS.ErrnoException | null | undefined;
  const reason = e?.code === undefined ? undefined : REFUSALS[e.code];
  if (!reason) return undefined;
  const where = e!.path ? ` (${e!.syscall ? `${e!.syscall} ` : ""}${e!.path})` : "";
  return { code: e!.code === "ENOSPC" ? "disk_full" : "system_refused", message: `${reason}${where}` };
}

/**
 * The code and message a log line or a JSON failure gives an error: its own
 * (CdsnapError), a system refusal's, or `internal` with the message of a bug.
 *
 * @example
 *   errorSummary(new UsageError("another build (pid 41 on web1) is writing /srv/site; wait for it to finish"));
 *   // { code: "usage", message: "another build (pid 41 on web1) is writing /srv/site; wait for it to finish" }
 */
export function errorSummary(error: unknown): { code: string; message: string } {
  if (error instanceof CdsnapError) return { code: error.code, message: error.message };
  return systemRefusal(error) ?? { code: "internal", message: (error as Error | undefined)?.message ?? String(error) };
}

export function formatProblems(problems: readonly Problem[]): string {
  return problems.map((p) => `${p.where}: ${p.message}`).join("\n");
}
