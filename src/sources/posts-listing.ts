/**
 * An organization's posts as digests over its files, folder by folder: of
 * their fingerprints (what a directory walk sees) and of their bytes (what
 * the posts are). The build state records them; a rebuild whose walk gives a
 * folder's recorded fingerprints digest knows every post in it has the
 * recorded bytes without reading a stored row per post. So a rebuild that
 * finds nothing changed reads no such row, and one that finds a post edited
 * reads those of its folder alone.
 */
import { createHash } from "node:crypto";

/** The posts directly in one folder. */
export interface FolderListing {
  /** Of each file's path and fingerprint (size, mtime, ctime, inode), in path order. */
  fingerprints: string;
  /** Of each file's path and SHA-256, in path order. */
  content: string;
  /** How many posts it holds. */
  count: number;
}

export interface PostsListing {
  /** Of each folder's path and fingerprints digest. */
  fingerprints: string;
  /** Of each folder's path and content digest: what the organization's posts part is made from. */
  content: string;
  /** Each folder holding posts, by its path under the content folder. */
  folders: ReadonlyMap<string, FolderListing>;
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

/** The listing of one folder's posts, given in path order with each one's file, fingerprint and SHA-256. */
export function folderListing(posts: readonly { file: string; fingerprint: string; sha256: string }[]): FolderListing {
  return {
    fingerprints: pairsDigest(posts.map((p) => [p.file, p.fingerprint] as const)),
    content: pairsDigest(posts.map((p) => [p.file, p.sha256] as const)),
    count: posts.length,
  };
}

/** An organization's listing from its folders' (no folder: no posts). */
export function listingOfFolders(folders: ReadonlyMap<string, FolderListing>): PostsListing {
  const names = [...folders.keys()].sort();
  return {
    fingerprints: pairsDigest(names.map((name) => [name, folders.get(name)!.fingerprints] as const)),
    content: pairsDigest(names.map((name) => [name, folders.get(name)!.content] as const)),
    folders,
  };
}

/** The listing of posts given in path order, each with its file, fingerprint and SHA-256. */
export function listingOf(posts: readonly { file: string; fingerprint: string; sha256: string }[]): PostsListing {
  const byFolder = new Map<string, { file: string; fingerprint: string; sha256: string }[]>();
  for (const post of posts) {
    const folder = folderOfPost(post.file);
    const list = byFolder.get(folder);
    if (list) list.push(post);
    else byFolder.set(folder, [post]);
  }
  return listingOfFolders(new Map([...byFolder].map(([folder, list]) => [folder, folderListing(list)])));
}

/** The organization a post file belongs to: the folder it is in under the content folder. */
export const orgOfPost = (file: string): string => file.slice(0, file.indexOf("/"));

/** The folder a post file is directly in, under the content folder. */
export const folderOfPost = (file: string): string => file.slice(0, file.lastIndexOf("/"));
