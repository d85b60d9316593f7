/**
 * What `cdsnap dev` compares before and after each build to know whether the
 * build read the posts as they are now. File events are only hints: a watcher
 * may fold a write into an event it reported earlier, or report a save while
 * the editor is still writing it. A save that lands while a build is reading
 * changes the fingerprint, so the build is followed by another, whatever
 * events the watcher did or did not send.
 */
import { createHash, type Hash } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";

/** Names the build never reads as posts (dot files: editors' swap files, `.git`), nor descends into. */
const skipped = (name: string) => name.startsWith(".") || name === "node_modules";

async function identityOf(file: string): Promise<string> {
  try {
    // Nanosecond times and the inode: a save replaces the file or moves its mtime, even at the same size.
    const s = await stat(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.isDirectory() ? "d" : "f"}`;
  } catch (error) {
    // A dangling link or a loop is a state of its own: fixing it must change the fingerprint.
    return `!${(error as NodeJS.ErrnoException).code ?? "error"}`;
  }
}

async function addFolder(hash: Hash, root: string, rel: string): Promise<void> {
  let entries;
  try {
    entries = await readdir(path.join(root, rel), { withFileTypes: true });
  } catch (error) {
    hash.update(`${rel}\0!${(error as NodeJS.ErrnoException).code ?? "error"}\n`);
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const posts = entries.filter((e) => !skipped(e.name) && e.name.endsWith(".md"));
  const identities = await Promise.all(posts.map((e) => identityOf(path.join(root, rel, e.name))));
  posts.forEach((e, i) => hash.update(`${path.join(rel, e.name)}\0${identities[i]}\n`));
  // Linked folders are not descended into: their posts are seen at their own place in the content folder.
  for (const entry of entries) {
    if (entry.isDirectory() && !skipped(entry.name) && !entry.name.endsWith(".md")) {
      await addFolder(hash, root, path.join(rel, entry.name));
    }
  }
}

/**
 * A digest of every `*.md` entry under the content folder (or under the named
 * organizations' folders): its path, inode, size and times.
 *
 * @example
 *   const before = await fingerprintSources("content", ["demo"]);
 *   await build({ ..., orgs: ["demo"] });
 *   if ((await fingerprintSources("content", ["demo"])) !== before) queue.touch("demo");
 */
export async function fingerprintSources(content: string, orgs: readonly string[] | undefined): Promise<string> {
  const hash = createHash("sha256");
  for (const folder of orgs ?? [""]) {
    hash.update(`[${folder}]\n`);
    await addFolder(hash, content, folder);
  }
  return hash.digest("hex");
}
