/**
 * Reading one post file: strict UTF-8, inside the content folder once links
 * are resolved, with its identity and the SHA-256 of its bytes. Plain file
 * work, so that a build that parses nothing (every post unchanged) loads no
 * YAML reader or markdown lexer.
 *
 * The file calls are synchronous: one file is open at a time, and a plain
 * system call costs a few microseconds where a promise through the thread pool
 * cost more than the call itself.
 */
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, realpathSync, type Stats } from "node:fs";
import path from "node:path";
import { isErrnoCode } from "../errno.js";
import type { Problem } from "../errors.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

export function fingerprintOf(info: Pick<Stats, "size" | "mtimeMs" | "ctimeMs" | "ino">): string {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}`;
}

export interface Opened {
  text: string;
  fingerprint: string;
  sha256: string;
}

export const sha256Of = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

/**
 * Opens a post without following a link in its last component unless the link
 * stays inside the content folder; links in the folders above are caught by the
 * folder check (realpath of each folder, once per folder).
 */
function openInside(realRoot: string, absolute: string, realDirs: Map<string, string>, rel: string): number {
  const dir = path.dirname(absolute);
  let resolvedDir = realDirs.get(dir);
  if (resolvedDir === undefined) realDirs.set(dir, (resolvedDir = realpathSync(dir)));
  if (resolvedDir !== realRoot && !isInside(realRoot, resolvedDir)) {
    throw new SourceProblem({ where: rel, message: "links outside the content folder; symbolic links must stay inside it" });
  }
  try {
    return openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ELOOP") throw error;
  }
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch (error) {
    // Anything else (EACCES) is said by the parse's report of an unreadable file.
    if (isErrnoCode(error, "ENOENT", "ENOTDIR", "ELOOP")) throw new SourceProblem({ where: rel, message: "is a broken symbolic link" });
    throw error;
  }
  if (!isInside(realRoot, real)) {
    throw new SourceProblem({ where: rel, message: "links outside the content folder; symbolic links must stay inside it" });
  }
  return openSync(real, constants.O_RDONLY);
}

export class SourceProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

function readBytes(realRoot: string, root: string, rel: string, realDirs: Map<string, string>): { bytes: Buffer; fingerprint: string } {
  const fd = openInside(realRoot, path.join(root, rel), realDirs, rel);
  try {
    const info = fstatSync(fd);
    return { bytes: readFileSync(fd), fingerprint: fingerprintOf(info) };
  } finally {
    closeSync(fd);
  }
}

export function readText(realRoot: string, root: string, rel: string, realDirs: Map<string, string>): Opened {
  const { bytes, fingerprint } = readBytes(realRoot, root, rel, realDirs);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_ENCODING_INVALID_ENCODED_DATA") throw error;
    throw new SourceProblem({ where: rel, message: "is not valid UTF-8 text" });
  }
  return { text, fingerprint, sha256: sha256Of(bytes) };
}

// Reused by every readIdentity: a fresh checkout hashes every post, and a
// buffer per post made most of that build's garbage.
const scratch = Buffer.allocUnsafe(1 << 16);

/** A post file's fingerprint and the SHA-256 of its bytes. */
export type Identity = Omit<Opened, "text">;

/** Each file's identity, or null when it cannot be read (whatever the reason: parsing it reads it again and says why). */
export function readIdentities(realRoot: string, root: string, rels: readonly string[]): (Identity | null)[] {
  const realDirs = new Map<string, string>();
  return rels.map((rel) => {
    try {
      return readIdentity(realRoot, root, rel, realDirs);
    } catch {
      return null;
    }
  });
}

/** A post file's identity and the SHA-256 of its bytes, without decoding them: whether it is the file a record was parsed from. */
function readIdentity(realRoot: string, root: string, rel: string, realDirs: Map<string, string>): Identity {
  const fd = openInside(realRoot, path.join(root, rel), realDirs, rel);
  try {
    const info = fstatSync(fd);
    const hash = createHash("sha256");
    // The bytes fstat counted, as readFileSync reads them.
    for (let done = 0, n = -1; done < info.size && n !== 0; done += n) {
      n = readSync(fd, scratch, 0, Math.min(scratch.length, info.size - done), null);
      hash.update(scratch.subarray(0, n));
    }
    return { fingerprint: fingerprintOf(info), sha256: hash.digest("hex") };
  } finally {
    closeSync(fd);
  }
}
