/**
 * The edge document as the handler holds it: read again once `refreshMs` has
 * passed, parsed only when its text changed, and the last good one kept when
 * a read fails.
 */
import { readEdgeDocument, type EdgeDirectory, type Sha256 } from "./edge-document.js";

export interface DirectorySourceOptions {
  /** The edge document's text, or null when there is none yet. */
  document: () => Promise<string | null>;
  refreshMs: number;
  clock: () => number;
  sha256: Sha256;
  onError: (error: unknown) => void;
}

/**
 * The edge document, read again once `refreshMs` has passed. No load is
 * shared between requests: Workers ties a promise to the request that made it.
 * A document that fails to load keeps the last good one (and is logged); with
 * none at all, every answer that needs it is a 500.
 */
export function createDirectorySource(options: DirectorySourceOptions): () => Promise<EdgeDirectory> {
  const { document, refreshMs, clock, sha256, onError } = options;
  let directory: EdgeDirectory | null = null;
  let directoryText: string | null = null;
  let checkedAt = -Infinity;

  async function load(): Promise<EdgeDirectory> {
    const text = await document();
    if (text === null) throw new Error("there is no edge document: run cdsnap build, or cdsnap edge keys, and publish it");
    if (text !== directoryText || !directory) {
      directory = readEdgeDocument(text, sha256);
      directoryText = text;
    }
    return directory;
  }

  return async function currentDirectory(): Promise<EdgeDirectory> {
    const last = directory;
    if (last && clock() - checkedAt < refreshMs) return last;
    try {
      const loaded = await load();
      checkedAt = clock();
      return loaded;
    } catch (error) {
      if (!last) throw error;
      onError(error);
      checkedAt = clock();
      return last;
    }
  };
}
