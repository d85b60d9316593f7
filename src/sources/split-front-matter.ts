/**
 * Where a post's front matter ends and its body begins: plain text work, so
 * that reading a body again (a build whose budget let it go) needs no YAML reader.
 */
const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*(?:\r?\n|$)/m;

interface Split {
  yaml: string;
  body: string;
}

/** Splits front matter from body; a string is the reason it cannot. */
export function splitFrontMatter(text: string): Split | string {
  const open = OPEN.exec(text);
  if (!open) return "must start with a '---' line opening the front matter";
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) return "the front matter has no closing '---' line";
  return { yaml: rest.slice(0, close.index), body: rest.slice(close.index + close[0].length) };
}
