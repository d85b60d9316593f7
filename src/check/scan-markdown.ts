/**
 * Finds what the lint rules look at in a markdown body: `[N]` citation markers
 * and link destinations, each with its file line. A line scanner rather than a
 * full parser, on purpose: the rules need exact lines, and the cases that
 * matter are few. Fenced code blocks, inline code spans, HTML comments and
 * backslash-escaped brackets are skipped, so a `[3]` in a code sample is not a
 * citation. (Indented code blocks are not recognised; fence code in posts.)
 */

export interface Marker {
  /** The cited number: `[3]` is 3. */
  n: number;
  line: number;
}

export interface LinkTarget {
  /** The destination as written, without `<…>` and title. */
  url: string;
  line: number;
}

export interface BodyScan {
  markers: Marker[];
  links: LinkTarget[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const DEFINITION = /^ {0,3}\[([^\]]+)\]:[ \t]*(<[^>]*>|\S+)/;
// `[N]` not escaped and not the text of an inline link `[1](…)`.
const MARKER = /(?<!\\)\[(\d{1,6})\](?!\()/g;
// `[text](destination "title")`, one level of nested brackets in the text.
const INLINE_LINK =
  /(!?)\[(?:[^[\]]|\[[^[\]]*\])*\]\(\s*(<[^>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;

// The characters where blanking may start; text between them is copied as it is.
const SPECIAL = /[<\\`]/g;

/** Blanks inline code spans and HTML comments, keeping columns so nothing else moves. */
function blankInline(line: string, inComment: boolean): { text: string; inComment: boolean } {
  SPECIAL.lastIndex = 0;
  // Most lines of prose have nothing to blank: copying them a character at a time was most of `cdsnap check`'s time.
  if (!inComment && !SPECIAL.test(line)) return { text: line, inComment };
  let out = "";
  let i = 0;
  while (i < line.length) {
    if (inComment) {
      const end = line.indexOf("-->", i);
      if (end === -1) return { text: out + " ".repeat(line.length - i), inComment: true };
      out += " ".repeat(end + 3 - i);
      i = end + 3;
      inComment = false;
      continue;
    }
    if (line.startsWith("<!--", i)) {
      out += "    ";
      i += 4;
      inComment = true;
      continue;
    }
    if (line[i] === "\\" && i + 1 < line.length) {
      out += "  ";
      i += 2;
      continue;
    }
    if (line[i] === "`") {
      let run = 0;
      while (line[i + run] === "`") run++;
      const ticks = "`".repeat(run);
      let close = line.indexOf(ticks, i + run);
      // A closing run must be exactly as long as the opening one.
      while (close !== -1 && line[close + run] === "`") close = line.indexOf(ticks, close + run + 1);
      if (close === -1) {
        out += ticks;
        i += run;
        continue;
      }
      out += " ".repeat(close + run - i);
      i = close + run;
      continue;
    }
    SPECIAL.lastIndex = i + 1;
    const next = SPECIAL.exec(line)?.index ?? line.length;
    out += line.slice(i, next);
    i = next;
  }
  return { text: out, inComment };
}

function unwrap(destination: string): string {
  return destination.startsWith("<") && destination.endsWith(">") ? destination.slice(1, -1) : destination;
}

/**
 * Scans `body`, whose first line is line `firstLine` of its file.
 *
 * @example
 *   scanMarkdown("See [1].\n\n```\n[2]\n```\n[post](post:other)\n", 9)
 *   // { markers: [{ n: 1, line: 9 }], links: [{ url: "post:other", line: 14 }] }
 */
export function scanMarkdown(body: string, firstLine: number): BodyScan {
  const markers: Marker[] = [];
  const links: LinkTarget[] = [];
  let fence: string | null = null;
  let inComment = false;
  body.split(/\r?\n/).forEach((raw, index) => {
    const line = firstLine + index;
    if (fence !== null) {
      const close = FENCE.exec(raw);
      if (close && close[1]![0] === fence[0] && close[1]!.length >= fence.length && raw.trim() === close[1]) fence = null;
      return;
    }
    const open = inComment ? null : FENCE.exec(raw);
    if (open) {
      fence = open[1]!;
      return;
    }
    const blanked = blankInline(raw, inComment);
    inComment = blanked.inComment;
    const text = blanked.text;
    const definition = DEFINITION.exec(text);
    if (definition) {
      // `[1]: https://…` defines a citation's target; it is not itself a citation.
      links.push({ url: unwrap(definition[2]!), line });
      return;
    }
    for (const match of text.matchAll(INLINE_LINK)) {
      if (match[1] !== "!") links.push({ url: unwrap(match[2]!), line });
    }
    for (const match of text.matchAll(MARKER)) markers.push({ n: Number(match[1]), line });
  });
  return { markers, links };
}
