/**
 * The br and gzip codings of file answers, made on the first request that
 * asks for one and kept by the coding's ETag, which names the file's bytes: a
 * file replaced by a build or a PATCH has a new ETag and is compressed afresh,
 * and a `?pages=` answer is compressed like a file. Compression runs on libuv's
 * thread pool, so a large list being compressed holds up no other request, and
 * the requests that ask for the same coding meanwhile share it.
 *
 * Why on request rather than at build time: on the 10k-post bench tree,
 * compressing every file (31,479 files, 184 MB) both ways took 7.7 s of CPU,
 * more than the whole 5.4 s build, and would have doubled the files written,
 * while the first request for the largest file (the 7.3 MB contents list)
 * waits 0.1 s (gzip) to 0.25 s (br), once per version; and the organization
 * file the write proxy rewrites and every `?pages=` answer would have needed
 * this path anyway.
 */
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { codedEtag, type Coding } from "../content-coding.js";
import type { CachedFile } from "./file-cache.js";
import { evictToFit } from "./second-chance.js";

/** What an answer sends: the file itself (no `coding`) or one of its codings. */
export interface Representation {
  bytes: Buffer;
  etag: string;
  coding?: Coding;
}

export interface CompressionCache {
  /** The coding of `file`: at once when it was made before, else once compressed. */
  encode(file: CachedFile, coding: Coding): Representation | Promise<Representation>;
}

/**
 * Brotli quality 5: on the bench's 7.3 MB contents list it takes 110 ms for
 * 1.37 MB, where 6 takes 135 ms for 1.35 MB and 11 nine seconds for 1.10 MB,
 * too long for the request that has to wait. gzip keeps zlib's default level.
 */
const BROTLI_QUALITY = 5;

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

function compress(bytes: Buffer, coding: Coding): Promise<Buffer> {
  if (coding === "gzip") return gzipped(bytes);
  return brotli(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  });
}

interface Entry {
  representation: Representation;
  /** Asked for since the eviction scan last passed it (second chance, as in the file cache). */
  used: boolean;
}

export function createCompressionCache(maxBytes = 64 * 1024 * 1024): CompressionCache {
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<Representation>>();
  let total = 0;

  function remember(key: string, representation: Representation): void {
    const size = representation.bytes.length;
    if (size > maxBytes / 4) return;
    entries.set(key, { representation, used: false });
    total = evictToFit(entries, total + size, maxBytes, (old) => old.representation.bytes.length);
  }

  async function make(key: string, file: CachedFile, coding: Coding): Promise<Representation> {
    try {
      const representation = { bytes: await compress(file.bytes, coding), etag: key, coding };
      remember(key, representation);
      return representation;
    } finally {
      pending.delete(key);
    }
  }

  return {
    encode(file, coding) {
      // The coding's ETag names exactly these bytes in this coding.
      const key = codedEtag(file.etag, coding);
      const entry = entries.get(key);
      if (entry) {
        entry.used = true;
        return entry.representation;
      }
      let made = pending.get(key);
      if (!made) {
        made = make(key, file, coding);
        pending.set(key, made);
      }
      return made;
    },
  };
}
