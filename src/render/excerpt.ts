/**
 * D3: an excerpt derived from the markdown body when the source gives none.
 * Plain text of the prose (code, tables, HTML and images left out), `[N]`
 * citation markers removed, cut at a word boundary with `…` when longer.
 *
 * Most bodies open with prose that prose-scan.ts reads; the rest is lexed
 * with marked (excerpt-lexer.ts), which a caller loads only for a body that
 * needs it (sources/parse-files.ts): it and the HTML entity tables took 20 ms
 * to load, a twentieth of a rebuild that parses one post.
 */
import { scanProse } from "./prose-scan.js";

export const EXCERPT_MAX = 200;
const ELLIPSIS = "…";

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
export function finished(text: string): string {
  return withoutCitations(text)
    .replace(/\s+/g, " ")
    .replace(/\s+([.,;:!?])/g, "$1")
    .trim();
}

/**
 * excerpt-lexer.ts's plainTextOf without marked, when prose-scan.ts reads the document (plain
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
export const SHALLOW = 1_000;

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
export function headOf(text: string, n: number): string {
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

function hasMoreThan(text: string, codePoints: number): boolean {
  if (text.length <= codePoints) return false;
  let count = 0;
  for (const _ of text) if (++count > codePoints) return true;
  return false;
}

/**
 * The excerpt of `markdown` from the plain text of its parts, each read by
 * `plainText`: undefined when it reads one not.
 */
export function excerptOf(markdown: string, plainText: (markdown: string) => string | undefined): string | undefined {
  for (let size = FIRST_TRY; ; ) {
    const end = markdown.indexOf("\n\n", size);
    if (end === -1 || end > BODY_READ_MAX) break;
    const part = markdown.slice(0, end);
    if (usesDefinitionsOf(part, markdown.slice(end))) break;
    const text = plainText(part);
    if (text === undefined) return undefined;
    if (hasMoreThan(text, EXCERPT_MAX + 1)) return cutAtWord(text);
    size = Math.max(size * GROWTH, end + 2);
  }
  const text = plainText(readableStartOf(markdown));
  return text === undefined ? undefined : cutAtWord(text);
}

/**
 * D3: the excerpt of a post that gives none, when prose-scan.ts reads every
 * part of its body it takes; undefined otherwise (excerpt-lexer.ts
 * deriveExcerpt then gives it). Where the scanner reads a part, its text is
 * the lexer's or starts it with more than cutAtWord looks at: the same excerpt.
 */
export function scannedExcerpt(markdown: string): string | undefined {
  return excerptOf(markdown, (part) => scannedPlainTextOf(part));
}
