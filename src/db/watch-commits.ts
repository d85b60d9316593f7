/**
 * Notices that another connection committed to the database: an admin tool
 * editing keys or rows, `cdsnap keys`, a PATCH through another server.
 * SQLite's `PRAGMA data_version` moves exactly then (never for the watching
 * connection's own commits), and reading it costs microseconds, so it is
 * polled. File events would not do: in WAL mode a commit becomes visible
 * through shared memory, which sends none, and a look made on the WAL's last
 * write can come before the commit it belongs to.
 *
 * The one watcher of `serve` (its key cache and its watch for readers lost),
 * `dev` (a rebuild) and `edge dev` (a new edge document).
 */
import type { Db } from "./open.js";

export interface CommitWatch {
  /** Looks now, as a timed look does: for a caller that must not act on what may be a moment old. */
  look(): void;
  stop(): void;
}

/**
 * Calls `onCommit` once per look (every `everyMs`) that finds one or more
 * commits of other connections since the last look `onCommit` got through:
 * one that throws is told to `onError` and called again at the next look.
 * The watch never keeps a process alive on its own; stop it before closing
 * the database.
 */
export function watchCommits(db: Db, everyMs: number, onCommit: () => void, onError: (error: unknown) => void): CommitWatch {
  const readVersion = db.prepare("PRAGMA data_version").pluck();
  let version = readVersion.get();
  function look(): void {
    try {
      const current = readVersion.get();
      if (current === version) return;
      onCommit();
      version = current;
    } catch (error) {
      onError(error);
    }
  }
  const timer = setInterval(look, everyMs);
  timer.unref();
  return { look, stop: () => clearInterval(timer) };
}
