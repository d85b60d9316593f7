/**
 * `cdsnap/edge`: the read API as a fetch handler, for Cloudflare Workers and
 * any runtime with the web APIs (Node 20 included). Bundled for a neutral
 * platform: nothing here, nor anything it imports, may need Node.
 */
export { createEdgeHandler, type EdgeHandler, type EdgeOptions, type TreeFile, type TreeReader } from "./handler.js";
export { type Compression } from "./compression.js";
export {
  EDGE_DOCUMENT_FORMAT,
  keyDigest,
  readEdgeDocument,
  subtleSha256,
  type EdgeDocument,
  type EdgeKey,
  type EdgeOrganization,
  type EdgeScope,
  type Sha256,
} from "./edge-document.js";
export {
  EDGE_DOCUMENT_KEY,
  assetsTree,
  createWorker,
  handlerForEnv,
  kvDocument,
  r2Tree,
  type AssetsBinding,
  type KvBinding,
  type R2BucketBinding,
  type WorkerEnv,
} from "./workers.js";
