/**
 * D3: an excerpt derived from the markdown body when the source gives none.
 * Plain text of the prose (code, tables, HTML and images left out), `[N]`
 * citation markers removed, cut at a word boundary with `…` when longer.
 */
import { decodeHTML } from "entities";
import { Lexer, type Token, type TokensList } from "marked";

export const EXCERPT_MAX = 200;
const ELLIPSIS = "…";
// Excerpts need only the opening prose; parsing a whole long post would cost
// far more than the first paragraphs. Cutting at a blank line keeps blocks whole.
const PREFIX_CHARS = 2000;
const SKIPPED = new Set(["code", "html", "tag", "table", "image", "def", "hr", "space", "checkbox"]);
const BLOCKS = new Set(["paragraph", "heading", "blockquote", "list_item"]);
const LEXER_OPTIONS = { gfm: true };

function prefixOf(markdown: string): string {
  if (markdown.length <= PREFIX_CHARS) return markdown;
  // A blank line keeps blocks whole; failing that a line end; failing that a
  // hard cap, so one enormous paragraph never reaches the lexer whole.
  const blank = markdown.indexOf("\n\n", PREFIX_CHARS);
  if (blank !== -1 && blank < PREFIX_CHARS * 4) return markdown.slice(0, blank);
  const line = markdown.indexOf("\n", PREFIX_CHARS);
  return markdown.slice(0, line !== -1 && line < PREFIX_CHARS * 4 ? line : PREFIX_CHARS * 2);
}

function collectText(tokens: readonly Token[], out: string[]): void {
  for (const token of tokens) {
    if (SKIPPED.has(token.type)) continue;
    // `[1]` with a `[1]: https://…` definition below lexes as a link, not as
    // text; it is still a citation marker and stays out of the excerpt.
    if (token.type === "link" && /^\[\d+\]$/.test(token.raw)) continue;
    if (token.type === "br") out.push(" ");
    else if (token.type === "list") collectText(token.items as Token[], out);
    else if ("tokens" in token && token.tokens) collectText(token.tokens, out);
    // The lexer keeps character references as written (`&amp;`); code spans are literal.
    else if (token.type === "codespan") out.push(token.text);
    else if ("text" in token && typeof token.text === "string") out.push(decodeHTML(token.text));
    if (BLOCKS.has(token.type)) out.push(" ");
  }
}

/** The plain text of a markdown document's prose, whitespace collapsed. */
export function plainTextOf(markdown: string): string {
  const tokens: TokensList = Lexer.lex(prefixOf(markdown), LEXER_OPTIONS);
  const parts: string[] = [];
  collectText(tokens, parts);
  return parts
    .join("")
    .replace(/\[\d+\]/g, "")
    .replace(/\s+/g, " ")
    .replace(/\s+([.,;:!?])/g, "$1")
    .trim();
}

/** Cuts text to at most `max` code points (the `…` included) at a word boundary. */
export function cutAtWord(text: string, max = EXCERPT_MAX): string {
  // Only the first max + 1 code points matter, and a code point is at most two
  // UTF-16 units: splitting all of a 2,000-character text was most of the cost.
  const head = text.length > 2 * (max + 1) ? text.slice(0, 2 * (max + 1)) : text;
  const chars = Array.from(head);
  if (head === text && chars.length <= max) return text;
  const room = chars.slice(0, max - ELLIPSIS.length).join("");
  // When the room ends exactly at the end of a word, that word is kept whole.
  const endsAtWord = /\s/.test(chars[max - ELLIPSIS.length] ?? "");
  const lastSpace = room.lastIndexOf(" ");
  const cut = endsAtWord ? room : lastSpace > 0 ? room.slice(0, lastSpace) : room;
  return cut.replace(/[\s,;:.\-–—]+$/u, "") + ELLIPSIS;
}

// Lexing is most of an excerpt's cost, and the opening paragraphs usually hold
// far more text than an excerpt keeps. So the part before the first blank line
// after FIRST_TRY characters is tried alone. Blocks end at a blank line, and
// what a block holds cannot change what an earlier one says, but for a link
// reference definition (`[a]: /url` turns an earlier `[a]` into a link): with
// none in the rest, the part's text is the start of the whole prefix's text,
// and when it runs past the cut (a character to spare, for punctuation that
// would join across the boundary), the excerpt is the same.
const FIRST_TRY = 600;
const DEFINITION = /^ {0,3}\[[^\]]+\]:/m;

function hasMoreThan(text: string, codePoints: number): boolean {
  if (text.length <= codePoints) return false;
  let count = 0;
  for (const _ of text) if (++count > codePoints) return true;
  return false;
}

export function deriveExcerpt(markdown: string): string {
  const prefix = prefixOf(markdown);
  const blank = prefix.indexOf("\n\n", FIRST_TRY);
  if (blank !== -1 && !DEFINITION.test(prefix.slice(blank))) {
    const text = plainTextOf(prefix.slice(0, blank));
    if (hasMoreThan(text, EXCERPT_MAX + 1)) return cutAtWord(text);
  }
  return cutAtWord(plainTextOf(markdown));
}
