/**
 * The edge's part in a write: a PATCH goes to the origin as it came, and the
 * organization file it rewrote is kept here until the edge document carries
 * it, so a route's file is the newest copy the edge has at hand.
 */
import { fileOf, pathOf, type Route } from "../api-paths.js";
import { kindOf } from "../route-table.js";
import type { EdgeDirectory } from "./edge-document.js";
import type { TreeFile, TreeReader } from "./handler.js";

export interface WriteThroughOptions {
  tree: TreeReader;
  /** The edge document at hand when a copy is kept: the copy stands until another arrives. */
  currentDirectory: () => Promise<EdgeDirectory>;
  clientAddress: (request: Request) => string | null | undefined;
  onError: (error: unknown) => void;
}

export interface WriteThrough {
  /** Passes a PATCH to `origin` at `target`; the origin's answer is the answer. */
  forward(request: Request, origin: URL, target: string, route: Route): Promise<Response>;
  /** Passes a read to `origin` at `target` as it came (a preview key's: the edge has no preview tree); the origin's answer is the answer. */
  relay(request: Request, origin: URL, target: string): Promise<Response>;
  fileOfRoute(route: Route, dir: EdgeDirectory): Promise<TreeFile | null>;
}

const ORGANIZATION = kindOf("organization", "single");

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function forwardedHeaders(request: Request, clientAddress: WriteThroughOptions["clientAddress"]): Headers {
  const headers = new Headers(request.headers);
  // The answer is passed on as it comes: a runtime that decodes it on the way (Node's fetch) must get it plain.
  headers.set("accept-encoding", "identity");
  headers.delete("host");
  // Appended last, after whatever the client wrote there: the entry the origin counts is the one this edge vouches for.
  const client = clientAddress(request);
  if (client) headers.set("x-forwarded-for", [headers.get("x-forwarded-for"), client].filter(Boolean).join(", "));
  return headers;
}

/** The organization file as the origin serves it, read with `key` (every key reads); null for any other answer (no file published), which leaves no copy. */
async function organizationFileAt(origin: URL, orgId: string, key: string | null): Promise<Uint8Array | null> {
  const target = new URL(pathOf({ kind: "organization", orgId }), origin);
  const read = await fetch(target, { headers: { "x-api-key": key ?? "", "accept-encoding": "identity" } });
  if (!read.ok) {
    await read.body?.cancel();
    return null;
  }
  return new Uint8Array(await read.arrayBuffer());
}

export function createWriteThrough(options: WriteThroughOptions): WriteThrough {
  const { tree: readTree, currentDirectory, clientAddress, onError } = options;

  /**
   * Organization files a PATCH passed through this edge rewrote, fetched from
   * the origin right after it, each kept until another document, written in
   * or after the second the origin answered it, has arrived (`serve` writes
   * one after each PATCH, which carries the file or a later one): the PATCH's
   * author reads their write at once, not when the document comes round.
   */
  const rewritten = new Map<string, TreeFile & { modified: Date; seen: EdgeDirectory }>();

  function relay(request: Request, origin: URL, target: string, headers = forwardedHeaders(request, clientAddress)): Promise<Response> {
    return fetch(new URL(target, origin), {
      method: request.method,
      headers,
      body: request.body,
      redirect: "manual",
      // Node's fetch streams a request body only when told it is half-duplex.
      duplex: "half",
    } as RequestInit);
  }

  async function forward(request: Request, origin: URL, target: string, route: Route): Promise<Response> {
    const headers = forwardedHeaders(request, clientAddress);
    const answer = await relay(request, origin, target, headers);
    const answeredAt = Date.parse(answer.headers.get("date") ?? "");
    if (answer.ok && Number.isFinite(answeredAt)) {
      // The PATCH is committed whatever becomes of the copy: its answer goes out all the same.
      await keepRewritten(origin, route.orgId, headers.get("x-api-key"), answeredAt).catch(onError);
    }
    return answer;
  }

  /**
   * Keeps the organization file a PATCH the origin answered at `answeredAt`
   * (its `Date`, to the second) rewrote, fetched with the PATCH's key.
   */
  async function keepRewritten(origin: URL, orgId: string, key: string | null, answeredAt: number): Promise<void> {
    const bytes = await organizationFileAt(origin, orgId, key);
    if (bytes) rewritten.set(orgId, { bytes, modified: new Date(answeredAt), seen: await currentDirectory() });
  }

  /**
   * A route's file. The organization file is the newest copy at hand: one a
   * PATCH through this edge rewrote; else the document's where it differs
   * from the tree's, unless the tree's is known to be newer (a tree on a file
   * system the origin rewrites in place). Static assets are the last deploy's.
   */
  async function fileOfRoute(route: Route, dir: EdgeDirectory): Promise<TreeFile | null> {
    if (route.kind !== ORGANIZATION) return readTree(fileOf(route));
    const own = rewritten.get(route.orgId);
    if (own && (dir === own.seen || dir.writtenAtMs < own.modified.getTime())) return own;
    rewritten.delete(route.orgId);
    const tree = await readTree(fileOf(route));
    const carried = dir.organization(route.orgId)?.file;
    if (!carried || (tree && (sameBytes(tree.bytes, carried) || (tree.modified !== null && tree.modified.getTime() > dir.writtenAtMs)))) return tree;
    return { bytes: carried, modified: new Date(dir.writtenAtMs) };
  }

  return { forward, relay: (request, origin, target) => relay(request, origin, target), fileOfRoute };
}
