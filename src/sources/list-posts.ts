/**
 * Finds the post files: every `*.md` under `<content>/<orgId>/`, each entry
 * classified rather than filtered, so that nothing an author meant as a post
 * vanishes without a word. A glob with `onlyFiles` drops a dangling link, a
 * link loop and a folder named `x.md` in silence, and follows a link back up
 * the tree until the system's link limit, reading every post forty times.
 *
 * What is refused (a build error naming the path, and the link's target):
 * - a `*.md` link that leads nowhere (missing target, or a loop of links);
 * - a `*.md` entry that is a folder or anything but a file: a name ending in
 *   `.md` is for posts;
 * - a folder link that leads outside the content folder, back to a folder
 *   that holds it (a loop), or to a folder the organization's walk already
 *   read (each post would be read twice). Another organization's folder is
 *   fine: organizations may share posts.
 * What is warned about: a link with another name that leads nowhere. It may be
 * a folder of posts, and then they are missing, or any other file; the build goes on.
 *
 * The calls are synchronous, like the reader's (parse-files.ts): one folder is
 * open at a time, so the open-file limit is never in play, and a plain system
 * call costs less than a promise through the thread pool. The walk pauses
 * every few hundred entries (a generator's yield) and tells each folder's
 * posts once it is read, so its caller can hand work to other threads while
 * it walks on (read-posts.ts hashes the posts a fresh checkout changed).
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, type Dirent, type Stats } from "node:fs";
import path from "node:path";
import { isErrnoCode } from "../errno.js";
import type { Problem, SourceWarning } from "../errors.js";
import { classify, isGone, unreadable, type Classified, type EntryType } from "./entry-kind.js";
import { fingerprintOf } from "./read-text.js";

export interface PostFile {
  /** Relative to the content folder, with `/`. */
  rel: string;
  /** Of the file itself, a link followed (read-text.ts fingerprintOf): kept rather than its Stats, of which a large walk holds one per post. */
  fingerprint: string;
  size: number;
  /** The folder it is directly in (posts-listing.ts folderOfPost): one string shared by the folder's posts. */
  folder: string;
}

/** Told the posts directly in a folder once the walk has read it, in path order. */
export type FolderRead = (folder: string, files: readonly PostFile[]) => void;

/** Entries a walk looks at between two pauses: a few milliseconds of `stat`s. */
const PAUSE_EVERY = 512;

export interface PostListing {
  /** Sorted by path. */
  files: PostFile[];
  problems: Problem[];
  warnings: SourceWarning[];
  /** `*.md` entries looked at, refused ones included. */
  found: number;
}

const isPostName = (name: string) => name.endsWith(".md");

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

function isAncestorOrSelf(folder: string, of: string): boolean {
  return folder === of || isInside(folder, of);
}

/** What a folder or file is, by the identity a second path to it would share. */
const identityOf = (stats: Stats) => `${stats.dev}:${stats.ino}`;

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

interface Folder {
  rel: string;
  stats: Stats;
}

/** A folder reached through a link: what the link says, and the real path of the folder that holds it. */
interface LinkedFolder extends Folder {
  target: string;
  holder: string;
}

/** An organization's walk: the folders read so far, by identity, with the path each was read at. */
type Visited = Map<string, string>;

class Walk {
  readonly files: PostFile[] = [];
  readonly problems: Problem[] = [];
  readonly warnings: SourceWarning[] = [];
  found = 0;

  /** The content folder with a separator at its end: a path to look at is this and a `rel` joined by hand. */
  private readonly base: string;

  /** Entries looked at since the last pause. */
  private sincePause = 0;

  constructor(
    contentDir: string,
    private readonly realRoot: string,
    private readonly onFolder: FolderRead,
  ) {
    this.base = path.join(contentDir, path.sep);
  }

  // A `rel` is made of names `readdir` gave, joined by "/": nothing in it for path.join to resolve, at a
  // cost that was 57 ms of a 100k-post walk.
  private absolute(rel: string): string {
    return this.base + rel;
  }

  /**
   * Records the entry at `rel` when it is a post or a refused one, or a link
   * that leads nowhere; returns what it is. `top`: directly in the content
   * folder, where no post belongs.
   */
  entry(rel: string, type: EntryType, top = false, folder = ""): Classified | undefined {
    const post = isPostName(rel);
    // Any other file is nothing to cdsnap: not even looked at.
    if (!post && !type.isSymbolicLink() && !type.isDirectory()) return undefined;
    let what: Classified;
    let target: string | undefined;
    try {
      what = classify(this.absolute(rel), type);
      if (what.kind === "broken") target = readlinkSync(this.absolute(rel));
    } catch (error) {
      // Removed since its folder was listed (an editor replacing a file, a checkout): it is not there, and its neighbours still are.
      if (isGone(error)) return undefined;
      if (post) this.refuse(rel, unreadable(error));
      return undefined;
    }
    if (what.kind === "broken") {
      const message = `is a symbolic link to ${target}, ${what.why}`;
      if (post) this.refuse(rel, `${message}; fix the link or remove it`);
      else this.warnings.push({ rule: "broken-link", where: rel, message: `${message}; it is skipped, and if it stood for a folder of posts, they are not built` });
    } else if (!post) {
      return what;
    } else if (what.kind === "folder") {
      this.refuse(rel, "is a folder, not a post: a name ending in .md is for post files; rename it");
    } else if (what.kind === "other") {
      this.refuse(rel, `is ${what.what}, not a post file: a name ending in .md is for post files; rename or remove it`);
    } else if (top) {
      this.refuse(rel, "is outside any organization folder; posts live in <content>/<orgId>/");
    } else {
      this.found++;
      this.files.push({ rel, fingerprint: fingerprintOf(what.stats), size: what.stats.size, folder });
    }
    return what;
  }

  private refuse(rel: string, message: string): void {
    this.found++;
    this.problems.push({ where: rel, message });
  }

  /**
   * Every post of one organization's folder: its real folders first, then the
   * links, so that a loop or a second path to a folder is blamed on a link.
   */
  *organization(orgId: string, stats: Stats, isLink: boolean): Generator<void, void> {
    const visited: Visited = new Map();
    const links: LinkedFolder[] = [];
    const root: Folder = { rel: orgId, stats };
    if (isLink) links.push({ ...root, target: readlinkSync(this.absolute(orgId)), holder: this.realRoot });
    else yield* this.folder(root, visited, links);
    for (let next = links.shift(); next; next = links.shift()) {
      if (this.linkAccepted(next, visited)) yield* this.folder(next, visited, links);
    }
  }

  private linkAccepted(folder: LinkedFolder, visited: Visited): boolean {
    const { target, holder } = folder;
    const real = realpathSync(this.absolute(folder.rel));
    const already = visited.get(identityOf(folder.stats));
    let message: string | undefined;
    if (real !== this.realRoot && !isInside(this.realRoot, real)) {
      message = `links outside the content folder (to ${target}); symbolic links must stay inside it`;
    } else if (isAncestorOrSelf(real, holder)) {
      const shown = real === this.realRoot ? "the content folder" : `${path.relative(this.realRoot, real).split(path.sep).join("/")}/`;
      message = `links back to ${target} (${shown}), a folder that holds it (a loop): its posts would be read without end; remove the link`;
    } else if (already !== undefined) {
      message = `links to ${target}, which is already read as ${already}/: its posts would be read twice; remove the link`;
    }
    if (message) this.problems.push({ where: folder.rel, message });
    return message === undefined;
  }

  /** Reads `start` and the real folders below it (with a stack of its own: a tree may nest thousands deep); links found are queued on `links`. */
  private *folder(start: Folder, visited: Visited, links: LinkedFolder[]): Generator<void, void> {
    for (let stack = [start], folder = stack.pop(); folder; folder = stack.pop()) {
      const already = visited.get(identityOf(folder.stats));
      if (already !== undefined) {
        const message = `is the folder ${already}/ again, reached another way: its posts would be read twice; remove the link that leads here`;
        this.problems.push({ where: folder.rel, message });
        continue;
      }
      visited.set(identityOf(folder.stats), folder.rel);
      let entries: Dirent[];
      try {
        entries = readdirSync(this.absolute(folder.rel), { withFileTypes: true }).sort(byName);
      } catch (error) {
        if (!isGone(error)) this.problems.push({ where: `${folder.rel}/`, message: unreadable(error) });
        continue;
      }
      const subfolders: Folder[] = [];
      const first = this.files.length;
      for (const entry of entries) {
        if (++this.sincePause === PAUSE_EVERY) {
          this.sincePause = 0;
          yield;
        }
        if (entry.name.startsWith(".")) continue;
        const rel = `${folder.rel}/${entry.name}`;
        const what = this.entry(rel, entry, false, folder.rel);
        if (what?.kind !== "folder" || isPostName(rel)) continue;
        if (!entry.isSymbolicLink()) subfolders.push({ rel, stats: what.stats });
        else links.push({ rel, stats: what.stats, target: readlinkSync(this.absolute(rel)), holder: realpathSync(this.absolute(folder.rel)) });
      }
      if (this.files.length > first) this.onFolder(folder.rel, this.files.slice(first));
      // Reversed onto the stack, so folders are read in name order.
      stack.push(...subfolders.reverse());
    }
  }
}

/** The entries directly in the content folder, or the named organizations' folders (those that exist). */
function topEntries(contentDir: string, orgIds?: readonly string[]): [string, EntryType][] {
  if (!orgIds) {
    return readdirSync(contentDir, { withFileTypes: true })
      .filter((entry) => !entry.name.startsWith("."))
      .sort(byName)
      .map((entry) => [entry.name, entry]);
  }
  return orgIds.flatMap((id): [string, EntryType][] => {
    try {
      return [[id, lstatSync(path.join(contentDir, id))]];
    } catch (error) {
      if (isErrnoCode(error, "ENOENT")) return [];
      throw error;
    }
  });
}

/**
 * The post files of the named organization folders, or of every folder of the
 * content folder when `orgIds` is undefined; then a post directly in the
 * content folder is a problem too. Run it to its end (each `next()` walks on
 * to the next pause): its value is the listing.
 */
export function* walkPosts(contentDir: string, realRoot: string, orgIds: readonly string[] | undefined, onFolder: FolderRead): Generator<void, PostListing> {
  const walk = new Walk(contentDir, realRoot, onFolder);
  for (const [name, type] of topEntries(contentDir, orgIds)) {
    const what = walk.entry(name, type, true);
    if (what?.kind === "folder" && !isPostName(name)) yield* walk.organization(name, what.stats, type.isSymbolicLink());
  }
  walk.files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { files: walk.files, problems: walk.problems, warnings: walk.warnings, found: walk.found };
}
