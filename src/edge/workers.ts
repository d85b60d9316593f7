/**
 * The handler on Cloudflare Workers: the tree as static assets (the `ASSETS`
 * binding) or in an R2 bucket (`TREE`), the edge document in a KV namespace
 * (`CDSNAP_EDGE`, key `edge.json`), the origin in the `CDSNAP_ORIGIN` variable.
 * The bindings are typed here by the little the handler uses of them, so
 * nothing needs Cloudflare's type package.
 */
import { createEdgeHandler, type EdgeHandler, type TreeReader } from "./handler.js";

export interface AssetsBinding {
  fetch(request: Request): Promise<Response>;
}

export interface R2BucketBinding {
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer>; uploaded: Date } | null>;
}

export interface KvBinding {
  get(key: string, options: { type: "text"; cacheTtl?: number }): Promise<string | null>;
}

export interface WorkerEnv {
  ASSETS?: AssetsBinding;
  TREE?: R2BucketBinding;
  /** The key under which the tree's files sit in `TREE` (`site/`); default none. */
  CDSNAP_TREE_PREFIX?: string;
  CDSNAP_EDGE: KvBinding;
  CDSNAP_ORIGIN?: string;
  /** How often the handler reads the edge document again (ms); default 1000. */
  CDSNAP_REFRESH_MS?: string;
  /** KV's own cache of the document at each location (s); default 60, KV's own default. */
  CDSNAP_KV_CACHE_TTL?: string;
}

/** The key of the edge document in the `CDSNAP_EDGE` namespace. */
export const EDGE_DOCUMENT_KEY = "edge.json";

/**
 * Tree files from the static assets binding. The worker must run before the
 * assets (`run_worker_first`): otherwise the platform would serve the files
 * to anyone, without a key.
 */
export function assetsTree(assets: AssetsBinding): TreeReader {
  return async (file) => {
    const answer = await assets.fetch(new Request(`https://assets.invalid/${file}`));
    if (answer.status === 404) return null;
    if (!answer.ok) throw new Error(`the assets binding answered ${answer.status} for ${file}`);
    return { bytes: new Uint8Array(await answer.arrayBuffer()), modified: null };
  };
}

/** Tree files from an R2 bucket, each under its path in the tree (after `prefix`). */
export function r2Tree(bucket: R2BucketBinding, prefix = ""): TreeReader {
  return async (file) => {
    const object = await bucket.get(`${prefix}${file}`);
    return object ? { bytes: new Uint8Array(await object.arrayBuffer()), modified: object.uploaded } : null;
  };
}

export function kvDocument(kv: KvBinding, cacheTtl = 60): () => Promise<string | null> {
  return () => kv.get(EDGE_DOCUMENT_KEY, { type: "text", cacheTtl });
}

/** The handler for a worker's bindings. */
export function handlerForEnv(env: WorkerEnv): EdgeHandler {
  let tree: TreeReader;
  if (env.TREE) tree = r2Tree(env.TREE, env.CDSNAP_TREE_PREFIX ?? "");
  else if (env.ASSETS) tree = assetsTree(env.ASSETS);
  else throw new Error("the worker has neither an ASSETS nor a TREE (R2) binding for the tree");
  return createEdgeHandler({
    tree,
    document: kvDocument(env.CDSNAP_EDGE, Number(env.CDSNAP_KV_CACHE_TTL ?? 60)),
    origin: env.CDSNAP_ORIGIN || null,
    refreshMs: env.CDSNAP_REFRESH_MS === undefined ? undefined : Number(env.CDSNAP_REFRESH_MS),
    // Workers compresses JSON for the client on its own, by Accept-Encoding.
    compression: "platform",
  });
}

/** A worker module: `export default createWorker()`. One handler per isolate, made on its first request. */
export function createWorker(): { fetch(request: Request, env: WorkerEnv): Promise<Response> } {
  let handler: EdgeHandler | undefined;
  return {
    fetch(request, env) {
      handler ??= handlerForEnv(env);
      return handler(request);
    },
  };
}
