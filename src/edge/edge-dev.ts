/**
 * `cdsnap edge dev`: the edge handler in the Workers runtime itself (workerd,
 * through miniflare), as it runs once deployed: the tree as static assets, the
 * edge document in a KV namespace, PATCHes passed to an origin. Without
 * `--origin`, that origin is a `cdsnap serve` of the same database and tree,
 * started here on a free loopback port, so a PATCH sent to the edge rewrites
 * the file the edge reads next.
 *
 * It keeps the local deployment current the way a production pipeline would,
 * only at once: every 250 ms it looks for a commit to the database (keys,
 * allowed origins) and a build's swap of `--out`; either rewrites the edge
 * document, a new document is put into KV, and a swap deploys the new tree.
 * A deploy is a copy, made of hard links: as on Workers, a file the origin
 * rewrites in its tree afterwards (a PATCH's organization file) is not the
 * deployed one, and reaches the edge by the document only.
 *
 * miniflare is an optional dependency: it and workerd's binary are large, and
 * only this command needs them.
 */
import { mkdirSync, readlinkSync, rmSync } from "node:fs";
import { readFile, readlink } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openContractDatabase } from "../db/contract-schema.js";
import type { Db } from "../db/open.js";
import { orNullOn } from "../errno.js";
import { watchCommits } from "../db/watch-commits.js";
import { listTree } from "../emit/list-tree.js";
import { linkInto } from "../emit/tree-files.js";
import { liveGenerationSync, treeStoreOf } from "../emit/tree-store.js";
import { UsageError } from "../errors.js";
import { startServer } from "../server/create-server.js";
import { assertPublishedTree } from "../server/published-tree.js";
import type { Logger } from "../server/respond.js";
import { edgeDocumentFileOf, writeEdgeDocument } from "./publish-document.js";
import { EDGE_WORKER_SOURCE, WORKER_COMPATIBILITY_DATE } from "./worker-source.js";

export interface EdgeDevOptions {
  db: string;
  out: string;
  host?: string;
  port?: number;
  /** Where PATCHes go; default a `cdsnap serve` started here. */
  origin?: string;
  /** The `cdsnap/edge` bundle (dist/edge.js); default the one beside this code. */
  edgeBundle?: string;
  /** How often the database and `--out` are looked at (ms); default 250. */
  pollMs?: number;
  /** The origin's access log, when it runs here. */
  log?: Logger;
}

export interface RunningEdgeDev {
  url: string;
  /** Where PATCHes go. */
  origin: string;
  close(): Promise<void>;
}

type MiniflareModule = typeof import("miniflare");

async function loadMiniflare(): Promise<MiniflareModule> {
  try {
    return await import("miniflare");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new UsageError(
      "cdsnap edge dev runs the Workers runtime through miniflare, which is not installed; install it beside cdsnap: npm install --save-dev miniflare",
    );
  }
}

export async function startEdgeDev(options: EdgeDevOptions): Promise<RunningEdgeDev> {
  assertPublishedTree(options.out, options.db);
  const { Miniflare } = await loadMiniflare();
  const bundle = await readFile(options.edgeBundle ?? fileURLToPath(new URL("./edge.js", import.meta.url)), "utf8");
  const origin = options.origin ? null : await startServer({ db: options.db, out: options.out, host: "127.0.0.1", port: 0, log: options.log });
  const originUrl = options.origin ?? origin!.url;
  const db = openContractDatabase(options.db, { readonly: true });
  let runtime: EdgeRuntime | undefined;
  let deployed: Deployment | undefined;
  async function tearDown(): Promise<void> {
    await deployed?.stop();
    await runtime?.dispose();
    await origin?.close(1_000);
    db.close();
    rmSync(deploysDirOf(options.out), { recursive: true, force: true });
  }
  try {
    writeEdgeDocument(db, options.out);
    runtime = await startRuntime(Miniflare, bundle, originUrl, options);
    deployed = keepDeployed(db, options.out, runtime, options.pollMs ?? 250);
    return { url: runtime.url, origin: originUrl, close: tearDown };
  } catch (error) {
    // The failure to start is the one to report; one of tearing down after it is only logged.
    await tearDown().catch((teardownError: unknown) => console.error(teardownError));
    throw error;
  }
}

/** The Workers runtime with the edge deployed: its assets a copy of the tree, its KV the edge document. */
interface EdgeRuntime {
  url: string;
  /** Puts the edge document into KV, unless KV holds this text already. */
  pushDocument(): Promise<void>;
  /** Serves `directory` as the static assets from now on. */
  redeploy(directory: string): Promise<void>;
  dispose(): Promise<void>;
}

async function startRuntime(Miniflare: MiniflareModule["Miniflare"], bundle: string, originUrl: string, options: EdgeDevOptions): Promise<EdgeRuntime> {
  const docFile = edgeDocumentFileOf(options.out);
  const miniflareOptions = {
    modules: [
      { type: "ESModule" as const, path: "worker.js", contents: EDGE_WORKER_SOURCE },
      { type: "ESModule" as const, path: "cdsnap-edge.js", contents: bundle },
    ],
    compatibilityDate: WORKER_COMPATIBILITY_DATE,
    assets: {
      directory: deploy(options.out, 0),
      binding: "ASSETS",
      routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
    },
    kvNamespaces: ["CDSNAP_EDGE"],
    bindings: { CDSNAP_ORIGIN: originUrl, CDSNAP_REFRESH_MS: "250" },
    host: options.host ?? "127.0.0.1",
    port: options.port ?? 8788,
  };
  const mf = new Miniflare(miniflareOptions);
  try {
    const url = await mf.ready;
    // A reload listens again: on the same port, not on another free one.
    miniflareOptions.port = Number(url.port);
    // Typed by Cloudflare's type package, which cdsnap does without: the one method used here.
    type Kv = { put(key: string, value: string): Promise<void> };
    let kv = (await mf.getKVNamespace("CDSNAP_EDGE")) as unknown as Kv;
    let pushed: string | null = null;
    const runtime: EdgeRuntime = {
      url: url.origin,
      async pushDocument() {
        const text = await orNullOn(readFile(docFile, "utf8"), "ENOENT");
        if (text !== null && text !== pushed) {
          await kv.put("edge.json", text);
          pushed = text;
        }
      },
      // A reload makes a new runtime: its KV handle is a new one, and its store may start empty.
      async redeploy(directory) {
        const previous = miniflareOptions.assets.directory;
        miniflareOptions.assets.directory = directory;
        await mf.setOptions(miniflareOptions);
        kv = (await mf.getKVNamespace("CDSNAP_EDGE")) as unknown as Kv;
        pushed = null;
        rmSync(previous, { recursive: true, force: true });
      },
      dispose: () => mf.dispose(),
    };
    await runtime.pushDocument();
    return runtime;
  } catch (error) {
    await mf.dispose().catch((disposeError: unknown) => console.error(disposeError));
    throw error;
  }
}

interface Deployment {
  /** Stops looking, after the update under way. */
  stop(): Promise<void>;
}

/**
 * Keeps the runtime as a production pipeline would, only at once: a commit
 * to the database (keys, allowed origins, a PATCH) writes the edge document
 * again; a build's swap of `out` also deploys the new tree; and a document
 * that differs from KV's, whoever wrote it (the origin does after a PATCH),
 * is put into KV. An update that fails is logged and tried again at the next
 * look.
 */
function keepDeployed(db: Db, out: string, runtime: EdgeRuntime, everyMs: number): Deployment {
  const onError = (error: unknown) => console.error(error);
  let link = readlinkSync(out);
  let committed = false;
  let deploys = 0;
  let stopped = false;
  let updates: Promise<void> = Promise.resolve();

  async function update(): Promise<void> {
    const nowLink = await readlink(out);
    // Taken before the document is read: a commit from here on sets it again, for the update queued after this one.
    const sawCommit = committed;
    committed = false;
    try {
      if (sawCommit || nowLink !== link) writeEdgeDocument(db, out);
      if (nowLink !== link) await runtime.redeploy(deploy(out, ++deploys));
      await runtime.pushDocument();
    } catch (error) {
      committed ||= sawCommit;
      throw error;
    }
    link = nowLink;
  }
  function look(): void {
    updates = updates.then(() => (stopped ? undefined : update())).catch(onError);
  }

  const commits = watchCommits(
    db,
    everyMs,
    () => {
      committed = true;
      look();
    },
    onError,
  );
  const timer = setInterval(look, everyMs);
  return {
    async stop() {
      stopped = true;
      commits.stop();
      clearInterval(timer);
      await updates;
    },
  };
}

/** Where edge dev keeps its deployed copies of the tree: cdsnap's folder beside it. */
const deploysDirOf = (out: string) => path.join(treeStoreOf(out).stateDir, "edge-dev");

/**
 * Deploys the live tree of `out` as copy number `n`: every file hard-linked
 * (no byte copied), so a rename in the live tree leaves the copy as it was.
 */
function deploy(out: string, n: number): string {
  const live = liveGenerationSync(treeStoreOf(out));
  if (!live) throw new UsageError(`${out} holds no published tree; run cdsnap build first`);
  const copy = path.join(deploysDirOf(out), String(n));
  rmSync(copy, { recursive: true, force: true });
  mkdirSync(copy, { recursive: true });
  for (const rel of listTree(live.tree).files) linkInto(copy, path.join(live.tree, rel), rel, false);
  return copy;
}
