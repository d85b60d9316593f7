/**
 * Which front matter js-yaml may read in `yaml`'s place (front-matter.ts): a
 * conservative check of the text, line by line. Within the shape it accepts,
 * both readers build the same values, and `yaml` reports no problem but a
 * duplicate key, which js-yaml refuses too (proved against `yaml` by
 * test/sources/front-matter-parity.test.ts). Anything outside it is read by
 * `yaml` alone.
 */
import { isInlineValue, KEY } from "./yaml-inline.js";

// Characters the two readers may treat differently, or that need a message:
// controls (tab included), lone CRs, NEL and C1, Unicode line breaks, BOMs,
// noncharacters; lone surrogates are checked apart (`isWellFormed`).
const UNSAFE_CHAR = /[\x00-\x09\x0B\x0C\x0E-\x1F\x7F-\x9F\u2028\u2029\uFEFF\uFFFE\uFFFF]|\r(?!\n)/;
const KEY_ENTRY = new RegExp(String.raw`^(${KEY}):(?= |$)`);
// `|` or `>` with optional chomping; an explicit indentation indicator is left to yaml.
const BLOCK_HEADER = /^[|>][-+]?(?: +#.*| *)$/;
const BLANK_OR_COMMENT = /^ *(?:#.*)?$/;
const DASH = /^- +/;
const MAX_DEPTH = 16;

/** Leading spaces, or -1 for a line of spaces only. */
function indentOf(line: string): number {
  let at = 0;
  while (line.charCodeAt(at) === 32) at++;
  return at < line.length ? at : -1;
}

/**
 * Checks, line by line, that front matter stays within block mappings and
 * sequences indented with spaces, keys as `KEY` (yaml-inline.ts), and values that are
 * single-line scalars, single-line flow collections of scalars, or `|`/`>`
 * block scalars whose lines are all indented alike. Within that shape js-yaml
 * and yaml read the same values and yaml reports no problem but a duplicate
 * key, which js-yaml refuses too. It records the file line of each top-level
 * key, as the slow path reads them off yaml's nodes.
 */
class Shape {
  private at = 0;
  private depth = 0;
  readonly keyLines: Record<string, number> = {};

  constructor(
    private readonly lines: readonly string[],
    private readonly firstLine: number,
  ) {}

  document(): boolean {
    return this.next() < this.lines.length && this.map(0, true);
  }

  /** Index of the next line that is neither blank nor only a comment. */
  private next(): number {
    let i = this.at;
    while (i < this.lines.length && BLANK_OR_COMMENT.test(this.lines[i]!)) i++;
    return i;
  }

  private map(indent: number, top: boolean): boolean {
    for (let i = this.next(); i < this.lines.length; i = this.next()) {
      const line = this.lines[i]!;
      const at = indentOf(line);
      if (at < indent) return true;
      if (at > indent) return false;
      this.at = i;
      if (!this.entry(line.slice(indent), indent, top)) return false;
    }
    return true;
  }

  /** One `key: value` whose key starts the text, at column `column` of the current line. */
  private entry(text: string, column: number, top: boolean): boolean {
    const key = KEY_ENTRY.exec(text);
    if (!key) return false;
    const name = key[1]!;
    if (top) this.keyLines[name[0] === '"' || name[0] === "'" ? name.slice(1, -1) : name] = this.at + this.firstLine;
    let start = key[0].length;
    while (text.charCodeAt(start) === 32) start++;
    const rest = text.slice(start);
    this.at++;
    return rest === "" || rest.startsWith("#") ? this.nested(column) : this.value(rest, column);
  }

  /** The value on the lines after `key:` at `indent`: a deeper mapping, a sequence, or none (null). */
  private nested(indent: number): boolean {
    const i = this.next();
    if (i === this.lines.length) return true;
    const line = this.lines[i]!;
    const at = indentOf(line);
    const dash = line.startsWith("- ", at);
    if (at < indent || (at === indent && !dash)) return true;
    // Front matter nests three deep; a bound keeps the recursion far from the stack's end.
    if (this.depth === MAX_DEPTH) return false;
    this.at = i;
    this.depth++;
    const ok = dash ? this.seq(at) : this.map(at, false);
    this.depth--;
    return ok;
  }

  private seq(indent: number): boolean {
    for (let i = this.next(); i < this.lines.length; i = this.next()) {
      const line = this.lines[i]!;
      const at = indentOf(line);
      if (at < indent || (at === indent && !line.startsWith("- ", at))) return true;
      if (at > indent) return false;
      this.at = i;
      const column = indent + DASH.exec(line.slice(indent))![0].length;
      const item = line.slice(column);
      if (KEY_ENTRY.test(item)) {
        if (!this.entry(item, column, false) || !this.map(column, false)) return false;
      } else {
        this.at++;
        if (item === "" || item.startsWith("#") || !this.value(item, indent)) return false;
      }
    }
    return true;
  }

  /** A value after `key: ` or `- `; a block scalar's lines must be indented deeper than `parent`. */
  private value(text: string, parent: number): boolean {
    return BLOCK_HEADER.test(text) ? this.blockScalar(parent) : isInlineValue(text);
  }

  private blockScalar(parent: number): boolean {
    let indent = -1;
    for (; this.at < this.lines.length; this.at++) {
      const line = this.lines[this.at]!;
      if (line === "") continue;
      const at = indentOf(line);
      // Lines of spaces only, and lines less indented than the first, are where the readers' rules get subtle.
      if (at < 0) return false;
      if (at <= parent) break;
      if (indent < 0) indent = at;
      else if (at < indent) return false;
    }
    return true;
  }
}

/**
 * The file line of each top-level key (the YAML's first line being file line
 * `firstLine`) when the front matter has a shape both readers read alike, else undefined.
 */
export function shapeOf(yaml: string, firstLine: number): Record<string, number> | undefined {
  if (UNSAFE_CHAR.test(yaml) || !yaml.isWellFormed() || (yaml !== "" && !yaml.endsWith("\n"))) return undefined;
  // Every CR is part of a CRLF here, and dropping them moves no line.
  const lines = (yaml.includes("\r") ? yaml.replaceAll("\r\n", "\n") : yaml).split("\n");
  lines.pop();
  const shape = new Shape(lines, firstLine);
  return shape.document() ? shape.keyLines : undefined;
}
