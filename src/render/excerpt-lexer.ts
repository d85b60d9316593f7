/**
 * The excerpt's plain text by marked's lexer (excerpt.ts): for a body
 * prose-scan.ts does not read, and what the scanner is held equal to. Loaded
 * only for such a body: it brings marked and the HTML entity tables.
 */
import { decodeHTML } from "entities";
import { Lexer, type Token, type TokensList } from "marked";
import { excerptOf, finished, headOf, scannedPlainTextOf, SHALLOW } from "./excerpt.js";

const SKIPPED = new Set(["code", "html", "tag", "table", "image", "def", "hr", "space", "checkbox"]);
const BLOCKS = new Set(["paragraph", "heading", "blockquote", "list_item"]);
const LEXER_OPTIONS = { gfm: true };

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
  const tokens: TokensList = Lexer.lex(markdown, LEXER_OPTIONS);
  const parts: string[] = [];
  collectText(tokens, parts);
  return finished(parts.join(""));
}

function lexablePlainTextOf(markdown: string): string {
  try {
    return plainTextOf(markdown);
  } catch (error) {
    if (!(error instanceof RangeError) || markdown.length <= SHALLOW) throw error;
    return plainTextOf(headOf(markdown, SHALLOW));
  }
}

/**
 * D3: the excerpt of a post that gives none: its body's plain text, cut at a
 * word with `…`. Lexing was most of a build's time per post; the parts of a
 * body prose-scan.ts reads are not lexed.
 */
export function deriveExcerpt(markdown: string): string {
  return excerptOf(markdown, (part) => scannedPlainTextOf(part) ?? lexablePlainTextOf(part))!;
}

/** deriveExcerpt with every part lexed: what deriveExcerpt falls back to, and what it is held equal to. */
export function deriveExcerptByLexer(markdown: string): string {
  return excerptOf(markdown, lexablePlainTextOf)!;
}
