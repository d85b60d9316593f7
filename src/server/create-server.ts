/**
 * `cdsnap serve`: the origin a CDN sits in front of. Serves the built tree
 * (GET, HEAD) behind the API-key check, answers CORS preflights, and is the
 * write proxy for the two PATCH endpoints. It builds only with `schedule`
 * (`--schedule`), and then only when a scheduled post falls due
 * (schedule/serve-schedule.ts); otherwise the builds are CI's (D14). It
 * refuses to start where no build has published a tree; on start it brings
 * every organization file up to its database row, which repairs a crash
 * between a PATCH's commit and its file rename.
 */
import type { Server } from "node:http";
import type { ServeSchedule, ServeScheduleOptions } from "../schedule/serve-schedule.js";
import { accessChange, patchChange, type Change } from "../on-change/change-set.js";
import { openContractDatabase } from "../db/contract-schema.js";
import type { Db } from "../db/open.js";
import { listOrgIds } from "../db/read-snapshot.js";
import { watchCommits, type CommitWatch } from "../db/watch-commits.js";
import { edgeDocumentWriter } from "../edge/publish-document.js";
import { refreshOrganizationFiles } from "../emit/organization-file.js";
import { previewOutOf, treeStoreOf, type TreeStore } from "../emit/tree-store.js";
import { defaultLogger, flushLog } from "./access-log.js";
import { watchAccess } from "./access-watch.js";
import { createAuthCache, DEFAULT_AUTH_REFRESH_MS, type AuthCache } from "./auth.js";
import { createCallerCheck } from "./caller-check.js";
import { createCompressionCache } from "./compression.js";
import { createFileCache } from "./file-cache.js";
import { closeDraining, countInFlight, createHttpServer, listen, urlOf, type ServerTimeouts } from "./http-server.js";
import { orderPerConnection } from "./pipelining.js";
import { assertPublishedTree } from "./published-tree.js";
import { createRateLimiter, DEFAULT_WRITE_RATE } from "./rate-limit.js";
import { createRequestHandler } from "./request-handler.js";
import type { Logger } from "./respond.js";
import { createStaticRoute } from "./static-route.js";
import { createWriteProxy } from "./write-proxy.js";

export { defaultLogger } from "./access-log.js";
export { DEFAULT_TIMEOUTS, type ServerTimeouts } from "./http-server.js";

export interface ServeOptions {
  db: string;
  out: string;
  host?: string;
  port?: number;
  /** PATCH requests a minute per key (D6). */
  writeRate?: number;
  /** Failed authentications a minute per client address before it gets 429; 0 turns the limit off. */
  authFailureRate?: number;
  /**
   * A header the proxy or CDN in front of the server sets to the client's
   * address (`x-forwarded-for`, `cf-connecting-ip`, …): the failed-key limit
   * then counts per client instead of per edge. Only for a server every
   * request reaches through that proxy: anyone else could write the header.
   */
  clientAddressHeader?: string;
  /** One JSON object per call; defaults to a line on stdout. */
  log?: Logger;
  clock?: () => number;
  /** How often the database is looked at for another connection's commit (keys, origins), in ms. */
  authRefreshMs?: number;
  /** Limits on slow clients; the defaults suit production, tests shorten them. */
  timeouts?: ServerTimeouts;
  /**
   * Told of every change that makes answers a cache holds stale: a PATCH's
   * organization file, a file repaired on start, an organization whose keys or
   * allowed origins changed. Called synchronously; it must not block (the
   * on-change hook only records the change).
   */
  onChange?: (change: Change) => void;
  /** Build when a scheduled post falls due (`serve --schedule`); `onChange` hears of those builds too. */
  schedule?: Omit<ServeScheduleOptions, "db" | "out" | "log" | "onChange">;
}

export interface RunningServer {
  url: string;
  server: Server;
  db: Db;
  /** Stops the schedule (waiting for a build in flight), stops accepting, lets in-flight requests finish (at most `graceMs`), closes the database. */
  close(graceMs?: number): Promise<void>;
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? defaultLogger;
  const clock = options.clock ?? Date.now;
  assertPublishedTree(options.out, options.db);
  const db = openContractDatabase(options.db, { wal: true });
  const store = treeStoreOf(options.out);
  const { onChange } = options;
  // The edge document carries the organization files, which PATCHes rewrite.
  const writeEdgeDocument = edgeDocumentWriter(db, options.out, (error) => log({ level: "error", msg: "edge document not written", error: String(error) }));
  repairOrganizationFiles(db, store, writeEdgeDocument, onChange);

  // Called only once the server runs, after `commits` exists.
  const auth = createAuthCache(db, () => commits.look());
  const statics = createStaticRoute(store, createFileCache(), createCompressionCache(), treeStoreOf(previewOutOf(options.out)));
  const proxy = createWriteProxy(db, store, (change) => {
    writeEdgeDocument(change.orgs);
    onChange?.(change);
  });
  const commits = watchOtherCommits(db, auth, options, log);
  const writeLimiter = createRateLimiter(options.writeRate ?? DEFAULT_WRITE_RATE, clock);
  const authenticate = createCallerCheck(auth, options, clock, log);
  const requests = countInFlight();
  const handle = createRequestHandler({ auth, authenticate, statics, proxy, writeLimiter }, requests, log);
  const server = createHttpServer(options.timeouts, orderPerConnection(handle, requests));
  let schedule: ServeSchedule | null = null;
  try {
    // Loaded only when asked for: a server that never builds does not load the build.
    if (options.schedule) {
      const { startServeSchedule } = await import("../schedule/serve-schedule.js");
      schedule = startServeSchedule({ ...options.schedule, db: options.db, out: options.out, log, onChange });
    }
    await listen(server, options.port ?? 8787, options.host ?? "127.0.0.1");
  } catch (error) {
    await schedule?.close();
    commits.stop();
    db.close();
    throw error;
  }

  return {
    url: urlOf(server),
    server,
    db,
    async close(graceMs = 10_000) {
      await schedule?.close();
      await closeDraining(server, requests, graceMs);
      proxy.flush();
      commits.stop();
      db.close();
      flushLog();
    },
  };
}

/** Brings every organization file up to its database row (a crash between a PATCH's commit and its file rename leaves one behind), and tells of those rewritten. */
function repairOrganizationFiles(
  db: Db,
  store: TreeStore,
  writeEdgeDocument: (orgIds: readonly string[]) => void,
  onChange: ServeOptions["onChange"],
): void {
  const repaired = [...refreshOrganizationFiles(db, store, listOrgIds(db))].filter(([, result]) => result?.written).map(([orgId]) => orgId);
  if (repaired.length > 0) writeEdgeDocument(repaired);
  if (onChange && repaired.length > 0) onChange(patchChange(repaired));
}

/** After another connection's commit, the keys are read again and the on-change hook hears of organizations whose readers changed. */
function watchOtherCommits(db: Db, auth: AuthCache, options: ServeOptions, log: Logger): CommitWatch {
  const { onChange } = options;
  const access = onChange ? watchAccess(db, (orgIds) => onChange(accessChange(orgIds))) : null;
  return watchCommits(
    db,
    options.authRefreshMs ?? DEFAULT_AUTH_REFRESH_MS,
    () => {
      auth.reload();
      access?.onCommit();
    },
    (error) => log({ level: "error", msg: "keys not read again after a commit", error: String(error) }),
  );
}
