/**
 * D3: an excerpt derived from the markdown body when the source gives none.
 * Plain text of the prose (code, tables, HTML and images left out), `[N]`
 * citation markers removed, cut at a word boundary with `…` when longer.
 */
import { decodeHTML } from "entities";
import { Lexer, type Token, type TokensList } from "marked";
import { scanProse } from "./prose-scan.js";

export const EXCERPT_MAX = 200;
const ELLIPSIS = "…";
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

const CITATION = /\[\d+\]/g;

/** Removes `[N]` markers, also those that removing one leaves (`[[1]2]`). */
function withoutCitations(text: string): string {
  let out = text;
  // With no `[` left, another pass would find nothing.
  while (out.includes("[")) {
    const next = out.replace(CITATION, "");
    if (next === out) break;
    out = next;
  }
  return out;
}

/** Gathered text to plain text: markers out, whitespace collapsed, no space before punctuation. */
function finished(text: string): string {
  return withoutCitations(text)
    .replace(/\s+/g, " ")
    .replace(/\s+([.,;:!?])/g, "$1")
    .trim();
}

/** The plain text of a markdown document's prose, whitespace collapsed. */
export function plainTextOf(markdown: string): string {
  const tokens: TokensList = Lexer.lex(markdown, LEXER_OPTIONS);
  const parts: string[] = [];
  collectText(tokens, parts);
  return finished(parts.join(""));
}

/**
 * plainTextOf without marked, when prose-scan.ts reads the document (plain
 * paragraphs and headings), else undefined. Unless `whole`, reading may end at
 * a blank line once the text holds more than the EXCERPT_MAX + 1 code points
 * cutAtWord looks at: the text is then the start of plainTextOf's, and cuts
 * the same. That blank line is within the first SHALLOW characters, so the
 * text is also the start of what lexablePlainTextOf reads when the whole
 * document overflows the lexer's stack.
 */
export function scannedPlainTextOf(markdown: string, whole = false): string | undefined {
  let gathered = "";
  let text = "";
  const enough = (more: string) => {
    // Finishing only shortens the text: too short a text is not finished to find out.
    if (more.length <= EXCERPT_MAX + 1) return false;
    gathered = more;
    text = finished(more);
    return hasMoreThan(text, EXCERPT_MAX + 1);
  };
  const scanned = scanProse(markdown, whole ? undefined : { within: SHALLOW, enough });
  if (scanned === undefined) return undefined;
  return scanned === gathered ? text : finished(scanned);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
const SPACE = /\s/;
const DANGLING = /[\s,;:.\-–—]/;

/** Cuts text to at most `max` code points (the `…` included) at a word boundary. */
export function cutAtWord(text: string, max = EXCERPT_MAX): string {
  // Counted in place: splitting the text into code points (Array.from) and
  // joining them back was most of the cost. A lone surrogate counts as one.
  const roomPoints = max - ELLIPSIS.length;
  let room = -1; // UTF-16 length of the first roomPoints code points
  let i = 0;
  let points = 0;
  for (; i < text.length && points <= max; points++) {
    if (points === roomPoints) room = i;
    i += isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
  }
  if (points <= max) return text;
  // When the room ends exactly at the end of a word, that word is kept whole.
  const endsAtWord = SPACE.test(text[room]!);
  const head = text.slice(0, room);
  const lastSpace = head.lastIndexOf(" ");
  const cut = endsAtWord ? head : lastSpace > 0 ? head.slice(0, lastSpace) : head;
  let end = cut.length;
  while (end > 0 && DANGLING.test(cut[end - 1]!)) end--;
  return cut.slice(0, end) + ELLIPSIS;
}

/**
 * How much of a body is read for its excerpt, at most. Past it the excerpt is
 * that of its start (cut at a blank line, else a line end, else hard), with the
 * link reference definitions of the rest: marked's lexer recurses, and a body
 * of megabytes in one paragraph overflowed its stack.
 */
export const BODY_READ_MAX = 40_000;
// marked's lexer recurses once per level of nesting: `- - - … x` a few thousand
// deep overflows the stack in a few kilobytes. A body it cannot lex gets the
// plain text of its first SHALLOW characters, too few to nest that deep.
const SHALLOW = 1_000;

// Lexing is most of an excerpt's cost, and the opening paragraphs usually hold
// far more text than an excerpt keeps. So the body is lexed in growing parts,
// each ending at a blank line: what comes after a blank line cannot change what
// comes before, but for a link reference definition (`[a]: /url` turns an
// earlier `[text][a]` into a link, wherever it stands). A part whose text runs
// past the cut (a character to spare, for punctuation that would join across
// the boundary) gives the excerpt of the whole body.
const FIRST_TRY = 600;
const GROWTH = 4;
// A definition may stand inside a quote or a list item and still holds for the
// whole body; taking a line for one when it is not costs only a longer read.
// A label holds no unescaped bracket (CommonMark), so a lone `[` on a line
// before one cannot swallow the definition into a label of its own.
const DEFINITION_LINES = /^(?:[ \t>]|[-+*][ \t]|\d{1,9}[.)][ \t])*\[((?:[^[\]\\]|\\.)+)\]:.*$/gm;

// Labels match without regard to case or runs of whitespace (CommonMark).
const labelKey = (text: string) => text.trim().toUpperCase().toLowerCase().replace(/\s+/g, " ");

/**
 * Whether a definition after `part` can change what `part` says: `part` uses
 * its label as a reference. A bare `[1]` is no such use: as a link or as text,
 * a citation marker is left out all the same.
 */
function usesDefinitionsOf(part: string, rest: string): boolean {
  // Most bodies define nothing; DEFINITION_LINES cannot match without `]:`.
  if (!rest.includes("]:")) return false;
  const labels = [...rest.matchAll(DEFINITION_LINES)].map((m) => labelKey(m[1]!));
  if (labels.length === 0) return false;
  const text = labelKey(part);
  return labels.some((label) =>
    /^\d+$/.test(label) ? text.includes(`][${label}]`) || text.includes(`[${label}][]`) : text.includes(`[${label}]`),
  );
}

/** The first `n` UTF-16 units of `text`, or one fewer, never half a surrogate pair. */
function headOf(text: string, n: number): string {
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/** The start of a body longer than BODY_READ_MAX, after the link reference definitions of the rest. */
function readableStartOf(markdown: string): string {
  if (markdown.length <= BODY_READ_MAX) return markdown;
  const half = BODY_READ_MAX / 2;
  const blank = markdown.lastIndexOf("\n\n", BODY_READ_MAX);
  const line = markdown.lastIndexOf("\n", BODY_READ_MAX);
  const start = blank > half ? markdown.slice(0, blank) : line > half ? markdown.slice(0, line) : headOf(markdown, BODY_READ_MAX);
  const definitions = markdown.slice(start.length).match(DEFINITION_LINES);
  return definitions ? `${definitions.join("\n")}\n\n${start}` : start;
}

function lexablePlainTextOf(markdown: string): string {
  try {
    return plainTextOf(markdown);
  } catch (error) {
    if (!(error instanceof RangeError) || markdown.length <= SHALLOW) throw error;
    return plainTextOf(headOf(markdown, SHALLOW));
  }
}

function hasMoreThan(text: string, codePoints: number): boolean {
  if (text.length <= codePoints) return false;
  let count = 0;
  for (const _ of text) if (++count > codePoints) return true;
  return false;
}

function excerptOf(markdown: string, plainText: (markdown: string) => string): string {
  for (let size = FIRST_TRY; ; ) {
    const end = markdown.indexOf("\n\n", size);
    if (end === -1 || end > BODY_READ_MAX) break;
    const part = markdown.slice(0, end);
    if (usesDefinitionsOf(part, markdown.slice(end))) break;
    const text = plainText(part);
    if (hasMoreThan(text, EXCERPT_MAX + 1)) return cutAtWord(text);
    size = Math.max(size * GROWTH, end + 2);
  }
  return cutAtWord(plainText(readableStartOf(markdown)));
}

// Where the scanner reads a part, its text is the lexer's or starts it with
// more than cutAtWord looks at: the loop above returns the same excerpt.
const scannedOrLexed = (markdown: string) => scannedPlainTextOf(markdown) ?? lexablePlainTextOf(markdown);

/**
 * D3: the excerpt of a post that gives none: its body's plain text, cut at a
 * word with `…`. Lexing was most of a build's time per post; the parts of a
 * body prose-scan.ts reads are not lexed.
 */
export function deriveExcerpt(markdown: string): string {
  return excerptOf(markdown, scannedOrLexed);
}

/** deriveExcerpt with every part lexed: what deriveExcerpt falls back to, and what it is held equal to. */
export function deriveExcerptByLexer(markdown: string): string {
  return excerptOf(markdown, lexablePlainTextOf);
}
