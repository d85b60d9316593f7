/**
 * An organization's posts as two digests over its files in path order: of
 * their fingerprints (what a directory walk sees) and of their bytes (what
 * the posts are). The build state records both; a rebuild whose walk gives
 * the recorded fingerprints digest knows every post's bytes are the recorded
 * ones without reading a stored row per post, which is what a rebuild that
 * finds nothing changed costs.
 */
import { createHash } from "node:crypto";

export interface PostsListing {
  /** Of each file's path and fingerprint (size, mtime, ctime, inode). */
  fingerprints: string;
  /** Of each file's path and SHA-256: what the organization's posts part is made from. */
  content: string;
}

/**
 * A digest over `[path, value]` pairs taken in path order. Neither a path nor
 * a value holds a NUL, so the NUL-ended fields are unambiguous.
 */
export function pairsDigest(pairs: Iterable<readonly [string, string]>): string {
  const hash = createHash("sha256");
  // Fed in chunks: one update per pair costs more in calls than in hashing.
  let chunk = "";
  for (const [rel, value] of pairs) {
    chunk += `${rel}\u0000${value}\u0000`;
    if (chunk.length >= 1 << 16) {
      hash.update(chunk);
      chunk = "";
    }
  }
  return hash.update(chunk).digest("hex");
}

/** The listing of posts given in path order, each with its file, fingerprint and SHA-256. */
export function listingOf(posts: readonly { file: string; fingerprint: string; sha256: string }[]): PostsListing {
  return {
    fingerprints: pairsDigest(posts.map((p) => [p.file, p.fingerprint] as const)),
    content: pairsDigest(posts.map((p) => [p.file, p.sha256] as const)),
  };
}

/** The organization a post file belongs to: the folder it is in under the content folder. */
export const orgOfPost = (file: string): string => file.slice(0, file.indexOf("/"));
