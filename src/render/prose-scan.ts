/**
 * The text excerpt.ts gathers from marked's tokens, read without marked, for
 * the markdown most posts open with: paragraphs and ATX headings of prose, with
 * `*em*`, `**strong**`, `_em_`, `__strong__`, `~~del~~`, code spans, inline
 * links and `[N]` markers in their plainest forms. Whatever else a body holds,
 * or anything marked could read another way, gives undefined and the caller
 * lexes: this reading is only ever a shortcut to the lexer's answer, never a
 * second definition of it (test/render/excerpt-scan.test.ts holds them equal).
 */

// How marked treats an ASCII character outside a construct.
const PLAIN = 0; // text as written
const BREAK = 1; // ' ' and '\n': text, and the end of a word
const MARK = 2; // may open a construct this scanner reads
const OTHER = 3; // anything else: `\` `<` `&` `|` `]`, tabs, CR, controls

const KIND = new Uint8Array(128).fill(PLAIN);
for (let c = 0; c < 0x20; c++) KIND[c] = OTHER;
KIND[0x7f] = OTHER;
KIND[0x20] = BREAK;
KIND[0x0a] = BREAK;
for (const c of "`*_~[") KIND[c.charCodeAt(0)] = MARK;
for (const c of "\\<&|]") KIND[c.charCodeAt(0)] = OTHER;

// Characters allowed in the address of an inline link read here: no space,
// parenthesis, quote, bracket, angle bracket or backslash, so no title, no
// nesting, nothing that ends or escapes it early.
const ADDRESS = new Uint8Array(128);
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#@!$&*+,;=%") ADDRESS[c.charCodeAt(0)] = 1;

const SPACE = 0x20;
const NEWLINE = 0x0a;
const BACKTICK = 0x60;
const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]
const BANG = 0x21;
const HASH = 0x23;

const isAsciiAlnum = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

// marked's flanking rules class a character as whitespace, punctuation
// (`\p{P}` and `\p{S}`) or neither; letters and digits are neither.
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;
const isLetterOrDigit = (codePoint: number) =>
  codePoint < 128 ? isAsciiAlnum(codePoint) : LETTER_OR_DIGIT.test(String.fromCodePoint(codePoint));

/** The code point ending just before `at`, a surrogate pair taken whole. */
function codePointBefore(md: string, at: number): number {
  const low = md.charCodeAt(at - 1);
  if (low >= 0xdc00 && low <= 0xdfff && at >= 2) {
    const high = md.charCodeAt(at - 2);
    if (high >= 0xd800 && high <= 0xdbff) return md.codePointAt(at - 2)!;
  }
  return low;
}

/**
 * Non-ASCII characters JavaScript's `\s` matches. marked's rules use `\s` in
 * places (flanking, trimming) where CommonMark means ASCII space: such a body
 * is left to the lexer rather than reasoned about.
 */
function isWideSpace(c: number): boolean {
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** May `c` stand in text read here (non-ASCII included)? */
const isText = (c: number) => (c < 128 ? KIND[c] === PLAIN || KIND[c] === BREAK : !isWideSpace(c));

/**
 * GFM turns `https://…`, `www.…` and `a@b.c` into links that run to the next
 * space and swallow any mark inside them: a mark in a word holding `:`, `@`
 * or `www.` before it is not read here.
 */
function mayBeAutolink(md: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = md.charCodeAt(i);
    if (c === 0x3a || c === 0x40) return true;
    if (c === 0x2e && i - from >= 3 && md.slice(i - 3, i).toLowerCase() === "www") return true;
  }
  return false;
}

/**
 * `*x*`, `**x**`, `_x_`, `__x__` or `~~x~~` at `at`, opened after a space or at
 * the start of the block, `x` plain text that starts and ends with a letter or
 * digit, closed by the same run before a space, the end of the block
 * or sentence punctuation. Delimiters in such a place can only open and close
 * each other, under CommonMark's flanking rules and marked's alike.
 * Returns the index past the closing run, or -1.
 */
function emphasisEnd(md: string, at: number, start: number, end: number): number {
  const mark = md.charCodeAt(at);
  if (at > start && md.charCodeAt(at - 1) !== SPACE && md.charCodeAt(at - 1) !== NEWLINE) return -1;
  let run = 1;
  while (at + run < end && md.charCodeAt(at + run) === mark) run++;
  if (run > 2 || (mark === 0x7e && run !== 2)) return -1;
  const first = at + run;
  if (first >= end || !isLetterOrDigit(md.codePointAt(first)!)) return -1;
  let i = first + 1;
  while (i < end && md.charCodeAt(i) !== mark) {
    if (!isText(md.charCodeAt(i))) return -1;
    i++;
  }
  if (i >= end || !isLetterOrDigit(codePointBefore(md, i))) return -1;
  for (let k = 1; k < run; k++) if (md.charCodeAt(i + k) !== mark) return -1;
  const after = i + run;
  if (after === end) return after;
  const next = md.charCodeAt(after);
  if (next === SPACE || next === NEWLINE) return after;
  // . , ; : ! ?
  if (next === 0x2e || next === 0x2c || next === 0x3b || next === 0x3a || next === 0x21 || next === 0x3f) return after;
  return -1;
}

/** A code span of one backtick at `at`, its text on one line with no space at either end. Returns the closing backtick's index, or -1. */
function codeSpanClose(md: string, at: number, end: number): number {
  const first = at + 1;
  if (first >= end || md.charCodeAt(first) === SPACE || md.charCodeAt(first) === BACKTICK) return -1;
  for (let i = first; i < end; i++) {
    const c = md.charCodeAt(i);
    if (c === BACKTICK) {
      if (md.charCodeAt(i - 1) === SPACE || (i + 1 < end && md.charCodeAt(i + 1) === BACKTICK)) return -1;
      return i;
    }
    if (c < 128 ? c < 0x20 || c === 0x7f || c === 0x5c : isWideSpace(c)) return -1;
  }
  return -1;
}

/** `[N]` at `at`: the index past `]`, or -1. */
function citationEnd(md: string, at: number, end: number): number {
  let i = at + 1;
  while (i < end && isDigit(md.charCodeAt(i))) i++;
  if (i === at + 1 || i >= end || md.charCodeAt(i) !== CLOSE) return -1;
  if (i + 1 < end && md.charCodeAt(i + 1) === 0x28) return -1; // `[1](…)` is a link
  return i + 1;
}

/** `[text](address)` at `at`, text plain on one line, no space at either end. Returns [index of `]`, index past `)`], or undefined. */
function inlineLink(md: string, at: number, end: number): [number, number] | undefined {
  const first = at + 1;
  if (first >= end || md.charCodeAt(first) === SPACE) return undefined;
  let i = first;
  for (; i < end; i++) {
    const c = md.charCodeAt(i);
    if (c === CLOSE) break;
    if (c === NEWLINE || !isText(c)) return undefined;
  }
  if (i === first || i + 1 >= end || md.charCodeAt(i - 1) === SPACE || md.charCodeAt(i + 1) !== 0x28) return undefined;
  const close = i;
  let j = close + 2;
  for (; j < end; j++) {
    const c = md.charCodeAt(j);
    if (c === 0x29) break;
    if (c >= 128 || ADDRESS[c] === 0) return undefined;
  }
  if (j === close + 2 || j >= end) return undefined;
  return [close, j + 1];
}

/** The text of the inline content md[start, end), as collectText gathers it, or undefined. */
function inlineText(md: string, start: number, end: number): string | undefined {
  let out = "";
  let from = start; // start of the text not yet copied to out
  let word = start; // start of the current word
  for (let i = start; i < end; ) {
    const c = md.charCodeAt(i);
    if (c >= 128) {
      if (isWideSpace(c)) return undefined;
      i++;
      continue;
    }
    const kind = KIND[c];
    if (kind === PLAIN) {
      i++;
      continue;
    }
    if (kind === BREAK) {
      word = ++i;
      continue;
    }
    if (kind === OTHER) return undefined;
    if (mayBeAutolink(md, word, i)) return undefined;
    if (c === OPEN) {
      if (i > start && md.charCodeAt(i - 1) === BANG) return undefined; // an image
      const cited = citationEnd(md, i, end);
      if (cited !== -1) {
        // Kept as written: the caller removes `[N]` markers from the joined text.
        i = cited;
        continue;
      }
      const link = inlineLink(md, i, end);
      if (link === undefined) return undefined;
      out += md.slice(from, i) + md.slice(i + 1, link[0]);
      i = from = link[1];
    } else if (c === BACKTICK) {
      const close = codeSpanClose(md, i, end);
      if (close === -1) return undefined;
      out += md.slice(from, i) + md.slice(i + 1, close);
      i = from = close + 1;
    } else {
      const after = emphasisEnd(md, i, start, end);
      if (after === -1) return undefined;
      const run = c === 0x7e ? 2 : md.charCodeAt(i + 1) === c ? 2 : 1;
      out += md.slice(from, i) + md.slice(i + run, after - run);
      i = from = after;
    }
  }
  return out + md.slice(from, end);
}

/** The end of the line starting at `at`. */
function lineEnd(md: string, at: number): number {
  const end = md.indexOf("\n", at);
  return end === -1 ? md.length : end;
}

/** At `at`, an ATX heading `#…# text` with no other `#`: [start, end) of its text, else undefined. */
function headingText(md: string, at: number, end: number): [number, number] | undefined {
  let i = at;
  while (i < end && md.charCodeAt(i) === HASH) i++;
  if (i - at > 6 || i >= end || md.charCodeAt(i) !== SPACE) return undefined;
  while (i < end && md.charCodeAt(i) === SPACE) i++;
  let last = end;
  while (last > i && md.charCodeAt(last - 1) === SPACE) last--;
  const hash = md.indexOf("#", i);
  // A closing `#` run, or a `#` marked might take for one.
  if (last === i || (hash !== -1 && hash < last)) return undefined;
  return [i, last];
}

/**
 * Whether a line starting at `at` can only continue or start a paragraph: it
 * opens with a letter, digits that are no list marker (`1.`, `2)`), `[` (no
 * definition: there is no `]:`), or a mark that cannot open a block: `*x`,
 * `**x`, `_x`, `__x`, `~~x` (no list item, rule or fence) and `` `x ``. Spaces,
 * `#`, `>`, `-`, `+`, `=`, `|`, `<`, fences and the rest could open another
 * block or underline a heading.
 */
function opensProse(md: string, at: number): boolean {
  const c = md.charCodeAt(at);
  if (c >= 128) return !isWideSpace(c);
  if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === OPEN) return true;
  if (c === 0x2a || c === 0x5f || c === 0x7e) {
    const run = md.charCodeAt(at + 1) === c ? 2 : 1;
    return (c !== 0x7e || run === 2) && at + run < md.length && isLetterOrDigit(md.codePointAt(at + run)!);
  }
  if (c === BACKTICK) return md.charCodeAt(at + 1) !== BACKTICK;
  if (!isDigit(c)) return false;
  let i = at + 1;
  while (i < md.length && isDigit(md.charCodeAt(i))) i++;
  const next = md.charCodeAt(i);
  return next !== 0x2e && next !== 0x29;
}

/** Where reading may end early: at a blank line by `within` once `enough(gathered)`. */
export interface ScanStop {
  within: number;
  enough: (gathered: string) => boolean;
}

/**
 * The text collectText gathers from `Lexer.lex(markdown)`, each paragraph and
 * heading followed by a space, or undefined when `markdown` holds anything
 * this scanner does not read with certainty. With `stop`, the text gathered
 * before a blank line (by `stop.within`) once `stop.enough` says so: nothing
 * after a blank line changes the blocks before it but a link reference
 * definition, and there is none.
 */
export function scanProse(markdown: string, stop?: ScanStop): string | undefined {
  // A link reference definition can turn brackets anywhere into a link.
  if (markdown.includes("]:")) return undefined;
  const md = markdown;
  let out = "";
  let para = -1; // start of the open paragraph, if any
  let paraEnd = -1;
  const closeParagraph = (): boolean => {
    if (para === -1) return true;
    const text = inlineText(md, para, paraEnd);
    para = -1;
    if (text === undefined) return false;
    out += `${text} `;
    return true;
  };
  for (let at = 0; at <= md.length; ) {
    const end = lineEnd(md, at);
    if (end === at) {
      if (!closeParagraph()) return undefined;
      if (stop !== undefined && at <= stop.within && stop.enough(out)) return out;
    } else if (md.charCodeAt(at) === HASH) {
      const heading = headingText(md, at, end);
      if (heading === undefined || !closeParagraph()) return undefined;
      const text = inlineText(md, heading[0], heading[1]);
      if (text === undefined) return undefined;
      out += `${text} `;
    } else {
      if (!opensProse(md, at)) return undefined;
      if (para === -1) para = at;
      paraEnd = end;
    }
    at = end + 1;
  }
  return closeParagraph() ? out : undefined;
}
