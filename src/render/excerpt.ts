/**
 * D3: an excerpt derived from the markdown body when the source gives none.
 * Plain text of the prose (code, tables, HTML and images left out), `[N]`
 * citation markers removed, cut at a word boundary with `…` when longer.
 */
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";
import type { Nodes } from "mdast";
import { codePointLength } from "../model/rules.js";

export const EXCERPT_MAX = 200;
const ELLIPSIS = "…";
// Excerpts need only the opening prose; parsing a whole long post would cost
// far more than the first paragraphs. Cutting at a blank line keeps blocks whole.
const PREFIX_CHARS = 2000;
const SKIPPED = new Set(["code", "html", "table", "image", "imageReference", "definition", "footnoteDefinition", "yaml"]);
const BLOCKS = new Set(["paragraph", "heading", "blockquote", "listItem", "list", "root"]);

function prefixOf(markdown: string): string {
  if (markdown.length <= PREFIX_CHARS) return markdown;
  const boundary = markdown.indexOf("\n\n", PREFIX_CHARS);
  return boundary === -1 ? markdown : markdown.slice(0, boundary);
}

function collectText(node: Nodes, out: string[]): void {
  if (SKIPPED.has(node.type)) return;
  if (node.type === "text" || node.type === "inlineCode") {
    out.push(node.value);
    return;
  }
  if (node.type === "break") {
    out.push(" ");
    return;
  }
  if ("children" in node) {
    for (const child of node.children) collectText(child as Nodes, out);
    if (BLOCKS.has(node.type)) out.push(" ");
  }
}

/** The plain text of a markdown document's prose, whitespace collapsed. */
export function plainTextOf(markdown: string): string {
  const tree = fromMarkdown(prefixOf(markdown), { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  const parts: string[] = [];
  collectText(tree, parts);
  return parts
    .join("")
    .replace(/\[\d+\]/g, "")
    .replace(/\s+/g, " ")
    .replace(/\s+([.,;:!?])/g, "$1")
    .trim();
}

/** Cuts text to at most `max` code points (the `…` included) at a word boundary. */
export function cutAtWord(text: string, max = EXCERPT_MAX): string {
  if (codePointLength(text) <= max) return text;
  const room = Array.from(text).slice(0, max - ELLIPSIS.length).join("");
  const lastSpace = room.lastIndexOf(" ");
  const cut = lastSpace > 0 ? room.slice(0, lastSpace) : room;
  return cut.replace(/[\s,;:.\-–—]+$/u, "") + ELLIPSIS;
}

export function deriveExcerpt(markdown: string): string {
  return cutAtWord(plainTextOf(markdown));
}
