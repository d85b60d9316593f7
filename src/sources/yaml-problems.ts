/**
 * `yaml`'s parse errors turned into what a person writing a post can act on.
 * The parser reports where it noticed a problem, in its own terms, and often
 * several times over: an unclosed `[` or quote is noticed at the end of the
 * front matter, a colon in a title as "Nested mappings are not allowed in
 * compact mappings", a tab indent as a cascade of errors about keys. Here each
 * problem is said once, at the line to change, with the change to make.
 */
import type { CST, LineCounter, YAMLError } from "yaml";
import { yamlLib } from "./yaml-lib.js";

export interface YamlProblem {
  /** The line of the file (not of the YAML). */
  line: number;
  message: string;
}

interface Unclosed {
  offset: number;
  opener: string;
  closer: string;
  /** What closing it takes, said to a person. */
  fix: string;
}

// Scans rather than regular expressions: a quoted value may be a megabyte long,
// and a regular expression would walk it through its backtracking stack.
function isClosedSingle(source: string): boolean {
  return source.length >= 2 && source.startsWith("'") && source.endsWith("'") && !source.slice(1, -1).replaceAll("''", "").includes("'");
}

function isClosedDouble(source: string): boolean {
  if (!source.startsWith('"')) return false;
  for (let i = 1; i < source.length; i++) {
    if (source[i] === "\\") i++;
    else if (source[i] === '"') return i === source.length - 1;
  }
  return false;
}

/**
 * Flow collections and quoted scalars that run to the end of the YAML, in the
 * order they open. The walk keeps its own stack: a hostile post nests
 * thousands of brackets deep.
 */
function unclosedOpenings(yaml: string): Unclosed[] {
  const found: Unclosed[] = [];
  const pending: (CST.Token | undefined)[] = [...new (yamlLib().Parser)().parse(yaml)];
  for (let node = pending.pop(); node !== undefined || pending.length > 0; node = pending.pop()) {
    if (node === undefined) continue;
    switch (node.type) {
      case "document":
        pending.push(node.value);
        break;
      case "flow-collection": {
        const closer = node.start.source === "[" ? "]" : "}";
        if (!node.end.some((t) => t.source === closer)) {
          found.push({ offset: node.offset, opener: `'${node.start.source}'`, closer, fix: `end the ${closer === "]" ? "list" : "mapping"} with '${closer}'` });
        }
        for (const item of node.items) pending.push(item.key ?? undefined, item.value);
        break;
      }
      case "block-map":
      case "block-seq":
        for (const item of node.items) pending.push("key" in item ? (item.key ?? undefined) : undefined, item.value);
        break;
      case "single-quoted-scalar":
      case "double-quoted-scalar": {
        const single = node.type === "single-quoted-scalar";
        if (!(single ? isClosedSingle : isClosedDouble)(node.source)) {
          const quote = single ? "'" : '"';
          found.push({ offset: node.offset, opener: `quote ${quote}`, closer: quote, fix: "close it" });
        }
        break;
      }
      default:
        break;
    }
  }
  return found.sort((a, b) => a.offset - b.offset);
}

const MAX_SHOWN = 160;

/** A suggested line as a message shows it: whole, unless it is long. */
function shown(line: string): string {
  return line.length <= MAX_SHOWN ? line : `${line.slice(0, MAX_SHOWN - 10)}…`;
}

/** `key: ` at the start of a line, after its indentation and any `- `. */
const KEY_START = /^(\s*(?:-\s+)?)((?:"[^"]*"|'[^']*'|[^\s#'"][^:#]*?)):[ \t]+/;
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * The `key: value` of one line, the value without its trailing spaces. The
 * value is cut with `trimEnd`: a lazy `(.*?)\s*$` took time quadratic in a run
 * of spaces, minutes for a line of a few hundred kilobytes.
 */
function keyValueOf(line: string): { key: string; value: string } | undefined {
  const start = KEY_START.exec(line);
  if (!start) return undefined;
  const value = line.slice(start[0].length).trimEnd();
  return LINE_BREAK.test(value) ? undefined : { key: start[2]!, value };
}

/** A value as YAML text in quotes: double ones where it needs no escape, else single ones, else escaped. */
export function quoteValue(value: string): string {
  if (!/["\\\p{Cc}]/u.test(value)) return `"${value}"`;
  if (!/['\p{Cc}]/u.test(value)) return `'${value}'`;
  return JSON.stringify(value); // JSON's escapes are YAML's too
}

/** The `key: value` of a line, with the value quoted. */
function quoted(line: string): string | undefined {
  const match = keyValueOf(line);
  return match ? shown(`${match.key}: ${quoteValue(match.value)}`) : undefined;
}

/**
 * The problems of YAML `yaml` whose parse gave `errors`, each once, in line
 * order; `firstLine` is the file line of the YAML's first line.
 */
export function describeYamlErrors(
  yaml: string,
  errors: readonly YAMLError[],
  counter: LineCounter,
  firstLine: number,
): YamlProblem[] {
  const fileLine = (offset: number) => counter.linePos(offset).line + firstLine - 1;
  const lines = yaml.split("\n").map((l) => l.replace(/\r$/, ""));
  const textOf = (line: number) => lines[line - firstLine] ?? "";

  // Past a tab indent the parser's reading of the structure is noise: the tabs are the problem.
  const tabbed = [...new Set(errors.filter((e) => e.code === "TAB_AS_INDENT").map((e) => fileLine(e.pos[0])))];
  if (tabbed.length > 0) {
    const others = tabbed.slice(1);
    const named = others.length <= 5 ? others.join(", ") : `${others.slice(0, 5).join(", ")} and ${others.length - 5} more`;
    const also = others.length === 0 ? "" : ` (so ${others.length === 1 ? "is line" : "are lines"} ${named})`;
    return [{ line: tabbed[0]!, message: `front matter: this line is indented with a tab${also}; indent with spaces, not tabs` }];
  }

  const problems = new Map<number, string>();
  // Where the parser reports one mistake twice, both reports start at the same offset.
  const offsets = new Set<number>();
  const add = (line: number, message: string) => {
    if (!problems.has(line)) problems.set(line, `front matter: ${message}`);
  };
  // Everything after an unclosed bracket or quote is read as part of it: only what comes before is its own problem.
  const unclosed = unclosedOpenings(yaml)[0];
  for (const error of errors) {
    if ((unclosed && error.pos[0] >= unclosed.offset) || offsets.has(error.pos[0])) continue;
    offsets.add(error.pos[0]);
    const problem = problemOf(error, fileLine(error.pos[0]), textOf, lines.length + firstLine - 1);
    add(problem.line, problem.message);
  }
  if (unclosed) {
    const line = fileLine(unclosed.offset);
    const closedLine = shown(`${textOf(line).trim()}${unclosed.closer}`);
    add(line, `the ${unclosed.opener} on line ${line} is never closed; ${unclosed.fix} on the same line: ${closedLine}`);
  }
  return [...problems].sort(([a], [b]) => a - b).map(([line, message]) => ({ line, message }));
}

const DUPLICATED_KEY = /^\s*(?:-\s+)?("[^"]*"|'[^']*'|[^:#]+?)\s*:/;
// yaml refuses a key over 1024 characters, so on a line indented by fewer than
// 1024 spaces the key lies in its first 2048; past that, yaml's own message is
// said. The bound keeps the lazy match above from taking time quadratic in a
// run of spaces.
const KEY_SCAN_LENGTH = 2048;

function problemOf(error: YAMLError, line: number, textOf: (line: number) => string, lastLine: number): YamlProblem {
  const text = textOf(line);
  const parserSays = error.message.split("\n")[0]!;
  const at = (message: string, where = line) => ({ line: where, message });
  switch (error.code) {
    case "BLOCK_AS_IMPLICIT_KEY": {
      if (!parserSays.startsWith("Nested mappings")) return at(parserSays);
      const match = keyValueOf(text);
      const value = match?.value ?? "";
      if (value.includes(": ") || value.endsWith(":")) {
        const why = value.includes(": ") ? "a value containing ': '" : "a value ending in ':'";
        return at(`${why} must be quoted: ${quoted(text)}`);
      }
      // `key: value` and then a deeper `other: …` line: YAML reads that line as more of the value, and fails.
      const next = nextContentLine(line, textOf, lastLine);
      if (!match || next === undefined) return at(parserSays);
      return at(
        `this line is indented under ${match.key} (line ${line}), which already has a value; indent it like the keys around it`,
        next,
      );
    }
    case "BAD_SCALAR_START": {
      const first = /character (\S+)$/.exec(parserSays)?.[1];
      const suggestion = quoted(text);
      return at(suggestion && first ? `a value starting with '${first}' must be quoted: ${suggestion}` : parserSays);
    }
    case "DUPLICATE_KEY": {
      const key = DUPLICATED_KEY.exec(text.slice(0, KEY_SCAN_LENGTH))?.[1];
      return at(key ? `the key ${key} is given more than once; keep one` : parserSays);
    }
    case "UNEXPECTED_TOKEN": {
      if (!parserSays.startsWith("Unexpected scalar at node end") || !keyValueOf(text)) return at(parserSays);
      return at(
        `text follows the end of the value (a value that opens with a quote or a bracket ends where it closes); ` +
          `quote the whole value: ${quoted(text)}`,
      );
    }
    default:
      return at(parserSays);
  }
}

function nextContentLine(line: number, textOf: (line: number) => string, lastLine: number): number | undefined {
  for (let next = line + 1; next <= lastLine; next++) if (textOf(next).trim() !== "") return next;
  return undefined;
}
