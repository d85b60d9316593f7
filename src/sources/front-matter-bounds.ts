/**
 * The size and shape of front matter cdsnap reads, checked before any YAML
 * reader composes it. A post's fields are short, nest three levels deep
 * (`references`, an entry, its `url`) and number a dozen; these bounds are far
 * above any real post, and below what the readers survive: past them, yaml's
 * composer and js-yaml recurse once per level until the stack runs out, a
 * value of a few megabytes takes seconds to scan, and yaml looks for a
 * duplicate key among all the keys before it (60,000 keys took 37 seconds).
 */
import type { CST } from "yaml";
import { yamlLib } from "./yaml-lib.js";

/** Front matter, in UTF-8 bytes (the body has no limit of its own). */
export const MAX_FRONT_MATTER_BYTES = 1024 * 1024;
/** Lists and mappings inside each other, the front matter's own mapping counting as one. */
export const MAX_FRONT_MATTER_DEPTH = 64;
/** Keys in one mapping; a post's has a dozen, and any other key is an error anyway. */
export const MAX_MAPPING_KEYS = 1000;

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
 * The YAML's concrete syntax tree, or the offset at which lists and mappings
 * nest deeper than the bound. yaml's CST parser keeps the nodes it is building
 * on a stack of its own (no recursion), so it reads any depth; it is stopped as
 * soon as the stack is too deep, before the rest of a hostile file costs anything.
 */
function syntaxTree(yaml: string): { tokens: CST.Token[] } | { tooDeepAt: number } {
  const { Lexer, Parser } = yamlLib();
  const parser = new Parser();
  const tokens: CST.Token[] = [];
  let offset = 0;
  for (const lexeme of new Lexer().lex(yaml)) {
    tokens.push(...parser.next(lexeme));
    if (parser.stack.length > MAX_FRONT_MATTER_DEPTH && parser.stack.filter((token) => COLLECTIONS.has(token.type)).length > MAX_FRONT_MATTER_DEPTH) {
      return { tooDeepAt: offset };
    }
    offset = parser.offset;
  }
  tokens.push(...parser.end());
  return { tokens };
}

/** The offset of the first key past the bound in a mapping, or undefined; the walk keeps its own stack, like the parser. */
function tooManyKeysAt(tokens: readonly CST.Token[]): number | undefined {
  const pending: (CST.Token | undefined)[] = [...tokens];
  for (let node = pending.pop(); node !== undefined || pending.length > 0; node = pending.pop()) {
    if (node === undefined) continue;
    if (node.type === "document") pending.push(node.value);
    if (node.type !== "block-map" && node.type !== "block-seq" && node.type !== "flow-collection") continue;
    const mapping = node.type === "block-map" || (node.type === "flow-collection" && node.start.source === "{");
    const extra = node.items[MAX_MAPPING_KEYS];
    if (mapping && extra) return extra.key?.offset ?? extra.start[0]?.offset ?? node.offset;
    for (const item of node.items) pending.push("key" in item ? (item.key ?? undefined) : undefined, item.value);
  }
  return undefined;
}

/**
 * The problem of front matter too large, too deeply nested or with too many
 * keys in a mapping to read, at the line where it goes past the bound;
 * undefined when it is within all three.
 *
 * @example
 *   boundsProblem(`title: ${"a".repeat(2 ** 21)}\n`, 2);
 *   // { line: 2, message: "front matter: is 2,049 KiB, over the limit of 1,024 KiB (1 MiB), …" }
 */
export function boundsProblem(yaml: string, firstLine: number): BoundsProblem | undefined {
  if (!withinSizeBound(yaml)) return sizeProblem(yaml, firstLine);
  const tree = syntaxTree(yaml);
  if ("tooDeepAt" in tree) {
    return {
      line: lineAt(yaml, tree.tooDeepAt, firstLine),
      message:
        `front matter: lists and mappings nest more than ${MAX_FRONT_MATTER_DEPTH} levels deep here, the most cdsnap reads; ` +
        "a post's fields nest three levels at most: remove the extra '[', '{' or '- '",
    };
  }
  const crowded = tooManyKeysAt(tree.tokens);
  if (crowded === undefined) return undefined;
  return {
    line: lineAt(yaml, crowded, firstLine),
    message:
      `front matter: this key is past the ${MAX_MAPPING_KEYS.toLocaleString("en")} keys of one mapping, the most cdsnap reads; ` +
      "a post's front matter has a dozen keys at most: remove the others",
  };
}
