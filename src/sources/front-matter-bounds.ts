/**
 * The size and depth of front matter cdsnap reads, checked before any YAML
 * reader sees it. A post's fields are short and nest three levels deep
 * (`references`, an entry, its `url`); these bounds are far above any real
 * post, and below what the readers survive: past them, yaml's composer and
 * js-yaml recurse once per level until the stack runs out, and a value of a
 * few megabytes takes seconds to scan.
 */
import { Lexer, Parser } from "yaml";

/** Front matter, in UTF-8 bytes (the body has no limit of its own). */
export const MAX_FRONT_MATTER_BYTES = 1024 * 1024;
/** Lists and mappings inside each other. */
export const MAX_FRONT_MATTER_DEPTH = 64;

export interface BoundsProblem {
  /** The file line (the YAML's first line being `firstLine`). */
  line: number;
  message: string;
}

/** Whether `yaml` is within the size bound; cheap for every real post. */
export function withinSizeBound(yaml: string): boolean {
  // A UTF-16 unit is at most three UTF-8 bytes: short text needs no count.
  return yaml.length * 3 <= MAX_FRONT_MATTER_BYTES || Buffer.byteLength(yaml) <= MAX_FRONT_MATTER_BYTES;
}

function lineAt(yaml: string, offset: number, firstLine: number): number {
  let line = firstLine;
  for (let i = yaml.indexOf("\n"); i !== -1 && i < offset; i = yaml.indexOf("\n", i + 1)) line++;
  return line;
}

function kibibytes(bytes: number): string {
  return `${Math.ceil(bytes / 1024).toLocaleString("en")} KiB`;
}

/** The line on which the front matter passes the size bound, where the long value usually is. */
function sizeProblem(yaml: string, firstLine: number): BoundsProblem {
  let bytes = 0;
  let line = firstLine;
  for (let start = 0; start < yaml.length; line++) {
    const end = yaml.indexOf("\n", start);
    const next = end === -1 ? yaml.length : end + 1;
    bytes += Buffer.byteLength(yaml.slice(start, next));
    if (bytes > MAX_FRONT_MATTER_BYTES) break;
    start = next;
  }
  return {
    line,
    message:
      `front matter: is ${kibibytes(Buffer.byteLength(yaml))}, over the limit of ${kibibytes(MAX_FRONT_MATTER_BYTES)} (1 MiB), which this line passes; ` +
      "front matter holds short fields: move long text into the body, and check that the closing '---' line is where it should be",
  };
}

const COLLECTIONS = new Set(["block-map", "block-seq", "flow-collection"]);

/**
 * The offset at which lists and mappings nest deeper than the bound, or
 * undefined. yaml's CST parser keeps the nodes it is building on a stack of its
 * own (no recursion), so it reads any depth; it is stopped as soon as the
 * stack is too deep, before the rest of a hostile file costs anything.
 */
function tooDeepAt(yaml: string): number | undefined {
  const parser = new Parser();
  let offset = 0;
  for (const lexeme of new Lexer().lex(yaml)) {
    // Drained for its effect on the stack; the documents it completes are not needed.
    for (const _document of parser.next(lexeme)) continue;
    if (parser.stack.length > MAX_FRONT_MATTER_DEPTH && parser.stack.filter((token) => COLLECTIONS.has(token.type)).length > MAX_FRONT_MATTER_DEPTH) {
      return offset;
    }
    offset = parser.offset;
  }
  return undefined;
}

/**
 * The problem of front matter too large or too deeply nested to read, at the
 * line where it goes past the bound; undefined when it is within both.
 *
 * @example
 *   boundsProblem(`title: ${"a".repeat(2 ** 21)}\n`, 2);
 *   // { line: 2, message: "front matter: is 2,049 KiB, over the limit of 1,024 KiB (1 MiB), …" }
 */
export function boundsProblem(yaml: string, firstLine: number): BoundsProblem | undefined {
  if (!withinSizeBound(yaml)) return sizeProblem(yaml, firstLine);
  const deep = tooDeepAt(yaml);
  if (deep === undefined) return undefined;
  return {
    line: lineAt(yaml, deep, firstLine),
    message:
      `front matter: lists and mappings nest more than ${MAX_FRONT_MATTER_DEPTH} levels deep here, the most cdsnap reads; ` +
      "a post's fields nest three levels at most: remove the extra '[', '{' or '- '",
  };
}
