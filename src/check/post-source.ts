/**
 * Where things are in a post file, for `file:line` messages: the line of any
 * front matter member (`featuredImage.alt`, `references.2`) and the line the
 * markdown body starts on. The build's reader has already validated the file;
 * this only locates, so it parses the YAML again for positions alone, and only
 * when a finding asks for a line: most posts have none.
 */
import { LineCounter, parseDocument, isMap, isScalar, type Document, type Node } from "yaml";

export interface PostSource {
  /** The file line of a front matter member, or of its nearest located parent; 1 when unknown. */
  lineOf(path: readonly (string | number)[]): number;
  /** The file line of the body's first line. */
  bodyLine: number;
}

const OPEN = /^---[ \t]*\r?\n/;

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Locates members of a post whose parsed body is `body` (a suffix of the file
 * text, as the reader returns it).
 *
 * @example
 *   const src = locatePost("---\ntitle: T\nfeaturedImage:\n  alt: ''\n---\nHi\n", "Hi\n");
 *   src.lineOf(["featuredImage", "alt"]); // 4
 *   src.bodyLine;                          // 6
 */
export function locatePost(text: string, body: string): PostSource {
  const unbom = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const open = OPEN.exec(unbom);
  const head = unbom.endsWith(body) ? unbom.slice(0, unbom.length - body.length) : unbom;
  const bodyLine = unbom.endsWith(body) ? countLines(head) + 1 : 1;
  // The head is the opening line, the YAML, and the closing line; YAML line 1 is file line 2.
  const yaml = open ? head.slice(open[0].length).replace(/^---[ \t]*\r?\n?$/m, "") : "";
  const counter = new LineCounter();
  let parsed: Document | undefined;
  const document = () => (parsed ??= parseDocument(yaml, { lineCounter: counter, prettyErrors: false, uniqueKeys: false }));
  const fileLine = (offset: number) => counter.linePos(offset).line + 1;

  function keyLine(parent: unknown, key: string | number): number | undefined {
    if (typeof key !== "string" || !isMap(parent)) return undefined;
    for (const pair of parent.items) {
      if (isScalar(pair.key) && pair.key.value === key && pair.key.range) return fileLine(pair.key.range[0]);
    }
    return undefined;
  }

  return {
    bodyLine,
    lineOf(path) {
      const doc = document();
      for (let depth = path.length; depth > 0; depth--) {
        const node = doc.getIn(path.slice(0, depth), true) as Node | undefined;
        // A scalar value sits on its key's line; a sequence item is found by its own range.
        if (isScalar(node) && node.range) return fileLine(node.range[0]);
        const parent = depth === 1 ? doc.contents : doc.getIn(path.slice(0, depth - 1), true);
        const line = keyLine(parent, path[depth - 1]!);
        if (line !== undefined) return line;
        if (node?.range) return fileLine(node.range[0]);
      }
      return 2;
    },
  };
}
