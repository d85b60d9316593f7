/**
 * deriveExcerpt reads the opening prose of most bodies with prose-scan.ts, not
 * marked's lexer. The lexer's reading stays the definition: every excerpt here
 * is held equal to deriveExcerptByLexer's (today's excerpt, every part lexed),
 * on generated bodies, on bench-style posts and on every post of the demo.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { renderPost } from "../../bench/post.js";
import { parsePost } from "../../src/sources/front-matter.js";
import { EXCERPT_MAX, cutAtWord, scannedExcerpt, scannedPlainTextOf } from "../../src/render/excerpt.js";
import { deriveExcerpt, deriveExcerptByLexer, plainTextOf } from "../../src/render/excerpt-lexer.js";
import { DEMO_CONTENT } from "../fixtures/repo.js";

const codePoints = (s: string) => [...s].length;

/** The part of a body deriveExcerpt reads first: up to the first blank line past 600 characters. */
const firstPart = (body: string) => {
  const end = body.indexOf("\n\n", 600);
  return end === -1 ? body : body.slice(0, end);
};

/**
 * scannedPlainTextOf's promise: read whole, the lexer's text; read as far as
 * it needs, the lexer's text or its start, longer than cutAtWord looks at.
 * Says which of the two read anything.
 */
function expectScanAgrees(markdown: string): { whole: boolean; start: boolean } {
  const whole = scannedPlainTextOf(markdown, true);
  const early = scannedPlainTextOf(markdown);
  if (whole === undefined && early === undefined) return { whole: false, start: false };
  const lexed = plainTextOf(markdown);
  if (whole !== undefined) expect(whole).toBe(lexed);
  if (early === undefined || early === lexed) return { whole: whole !== undefined, start: false };
  expect(lexed.startsWith(early)).toBe(true);
  expect(codePoints(early)).toBeGreaterThan(EXCERPT_MAX + 1);
  return { whole: whole !== undefined, start: true };
}

// ---------------------------------------------------------------------------
// Generated bodies: the prose the scanner reads, every near miss of it, and
// what it must leave to the lexer, in any order.

const WORDS = ["roast", "Bean", "water", "grind", "x", "2024", "1.5", "café", "咖啡", "😀", "𝔘", "e\u0301", "ß", "İ", "don't", '"q"', "(a)", "a>b", "#tag", "C#", "50%", "a=b", "{x}", "$5", "^"];
const URLS = ["https://example.com/a", "/local", "https://e.com/a_b*c~d&e=f;g", "u(1)", "<u>", "u 'title'", "", "#frag", "mailto:a@b.c"];

const word = fc.constantFrom(...WORDS);
const longWord = fc.integer({ min: 30, max: 260 }).map((n) => "y".repeat(n));
const wrapped = fc
  .tuple(
    fc.constantFrom("*%*", "**%**", "***%***", "_%_", "__%__", "~~%~~", "~%~", "`%`", "``%``", "` % `", "[%]", "[%][1]", "[%][]", "![%](/i.png)", "<em>%</em>", "%*", "*%", "_%", "%_", "~~%", "`%"),
    fc.oneof(word, fc.tuple(word, word).map(([a, b]) => `${a} ${b}`), fc.tuple(word, word).map(([a, b]) => `${a}\n${b}`)),
  )
  .map(([form, w]) => form.replace("%", w));
const link = fc
  .tuple(fc.oneof(word, fc.constantFrom("1", "a b", " a", "a ", "[a]", "`c`", "*e*", "https://x.org", "")), fc.constantFrom(...URLS))
  .map(([text, url]) => `[${text}](${url})`);
const citation = fc.oneof(
  fc.integer({ min: 0, max: 120 }).map((n) => `[${n}]`),
  fc.constantFrom("[1][2]", "[[1]2]", "[1]:", "[1] :", "[12]. ", "[3],", "[١]"),
);
const autolink = fc.constantFrom("https://www.example.org/word", "www.example.com", "a@b.co", "https://x.org/`c`", "https://x.org/*e*", "www.x.org[1]", "ftp://f.org/a_b_", "http://h.org.", "HTTPS://X.ORG");
const punctuation = fc.constantFrom(".", ",", ";", ":", "!", "?", ")", "'", "…", " .", " ,", "—");
const gap = fc.constantFrom(" ", " ", " ", "  ", "\n", "\n\n", "\n\n\n", "  \n", "\\\n", "\r\n", "\r\n\r\n", "\t", "\u00a0", "\u2003", " \n \n", "\n\n\n\n");
const mark = fc.constantFrom("*", "**", "_", "~", "`", "[", "]", "(", ")", "!", "<", ">", "&", "\\", "|", "#", "@", ":", "]:", "=", "-", "+");
const entity = fc.constantFrom("&amp;", "&#65;", "&#x1F600;", "&nbsp;", "&copy", "&bogus;", "AT&T");
const lineStart = fc.constantFrom("# ", "## ", "###### ", "####### ", "#", "- ", "* ", "+ ", "1. ", "2) ", "12. ", "> ", "    ", "   ", "---", "***", "___", "===", "```", "~~~", "| ", "<div>", "[1]: https://e.com/1", "[a]: /a", ":");
const block = fc.constantFrom(
  "```\ncode [1] *x*\n```",
  "~~~js\nconst a = 1;\n~~~",
  "<div>\nhidden\n</div>",
  "<!-- note -->",
  "| a | b |\n|---|---|\n| c | d |",
  "a | b\n--- | ---",
  "Setext\n===",
  "Setext\n---",
  "- one\n- two",
  "1. one\n2. two",
  "- [ ] task",
  "> quoted *em*",
  "    indented code",
  "***",
  "![alt](/i.png)",
  "## Heading *em* [1]",
  "# Closed #",
  "## Title ## ",
);

// Prose the scanner reads, mostly: sentences of words and constructs in their
// plain forms, wrapped at spaces, in paragraphs and headings.
const LINE_WORDS = ["roast", "Bean", "water", "2024", "café", "咖啡", "😀", "𝔘", "ß", "İ", "don't"];
const lineWord = fc.constantFrom(...LINE_WORDS);
const construct = fc
  .tuple(fc.constantFrom("*%*", "**%**", "_%_", "__%__", "~~%~~", "`%`", "[%](https://example.com/p)", "[% a](/p?q=1&r=2)", "*% water*", "`% --x`"), lineWord)
  .map(([form, w]) => form.replace("%", w));
const proseWord = fc.oneof(
  { weight: 12, arbitrary: lineWord },
  { weight: 4, arbitrary: word },
  { weight: 3, arbitrary: construct },
  { weight: 1, arbitrary: fc.tuple(lineWord, fc.integer({ min: 1, max: 12 })).map(([w, n]) => `${w} [${n}]`) },
  { weight: 1, arbitrary: fc.constantFrom("https://www.example.org/word", "www.example.com", "a@b.co") },
  { weight: 1, arbitrary: longWord },
);
const sentence = fc
  .tuple(lineWord, fc.array(fc.tuple(fc.constantFrom(" ", " ", " ", " ", "\n", "  \n", "  "), proseWord), { minLength: 1, maxLength: 18 }), fc.constantFrom(".", ".", "!", "?", ",", ":", ";", " .", "", "…"))
  .map(([first, rest, end]) => {
    let out = first;
    for (const [glue, w] of rest) out += glue.includes("\n") && !/^[A-Za-z0-9[*_`~\u0080-\uffff]/.test(w) ? ` ${w}` : glue + w;
    return out + end;
  });
const paragraph = fc.array(sentence, { minLength: 1, maxLength: 6 }).map((s) => s.join(" "));
const heading = fc.tuple(fc.integer({ min: 1, max: 6 }), fc.array(proseWord, { minLength: 1, maxLength: 6 })).map(([n, ws]) => `${"#".repeat(n)} ${ws.join(" ")}`);
const proseBlock = fc.oneof({ weight: 4, arbitrary: paragraph }, { weight: 1, arbitrary: heading });
const blockGap = fc.constantFrom("\n\n", "\n\n", "\n\n", "\n\n\n");
const miss = fc.oneof(wrapped, link, citation, autolink, gap, mark, entity, lineStart.map((s) => `\n${s}`), block.map((b) => `\n\n${b}\n\n`));

// Mostly prose with a rare near miss: the scanner reads much of it, so the
// equality below is tested where it matters.
const mostlyProse = fc
  .tuple(
    fc.array(fc.tuple(proseBlock, blockGap), { minLength: 1, maxLength: 12 }),
    fc.array(fc.tuple(fc.nat(), fc.nat(), miss), { maxLength: 2 }),
    fc.constantFrom("", "\n", "\n\n"),
  )
  .map(([blocks, misses, tail]) => {
    const parts = blocks.flatMap(([b, g]) => [b, g]).slice(0, -1);
    for (const [at, within, m] of misses) {
      const i = at % parts.length;
      const cut = within % (parts[i]!.length + 1);
      parts[i] = parts[i]!.slice(0, cut) + m + parts[i]!.slice(cut);
    }
    return parts.join("") + tail;
  });
// Anything: every near miss, and blocks only the lexer reads.
const anyToken = fc.oneof(
  { weight: 20, arbitrary: fc.oneof(word, fc.constant(" "), punctuation, longWord) },
  { weight: 4, arbitrary: wrapped },
  { weight: 2, arbitrary: link },
  { weight: 2, arbitrary: citation },
  { weight: 2, arbitrary: autolink },
  { weight: 4, arbitrary: gap },
  { weight: 2, arbitrary: mark },
  { weight: 1, arbitrary: entity },
  { weight: 2, arbitrary: lineStart.map((s) => `\n${s}`) },
  { weight: 1, arbitrary: block.map((b) => `\n\n${b}\n\n`) },
);
const anything = fc.array(anyToken, { maxLength: 400, size: "max" }).map((tokens) => tokens.join(""));
const bodies = fc.oneof(mostlyProse, anything);

describe("prose-scan against marked's lexer", () => {
  test("on generated bodies, the scanned text is the lexer's or its start, and the excerpt is today's", () => {
    const seen = { whole: 0, start: 0 };
    fc.assert(
      fc.property(bodies, (body) => {
        const read = expectScanAgrees(body);
        if (read.whole) seen.whole++;
        if (read.start) seen.start++;
        expect(deriveExcerpt(body)).toBe(deriveExcerptByLexer(body));
        expect([undefined, deriveExcerptByLexer(body)]).toContain(scannedExcerpt(body));
      }),
      { numRuns: 3000 },
    );
    // Not a vacuous pass: the scanner read a good share of them, both ways.
    expect(seen.whole).toBeGreaterThan(100);
    expect(seen.start).toBeGreaterThan(200);
  });

  test("on the first part of generated bodies, as deriveExcerpt reads it", () => {
    fc.assert(
      fc.property(mostlyProse, (body) => {
        expectScanAgrees(firstPart(body));
      }),
      { numRuns: 1000 },
    );
  });

  test("on short runs of words and marks packed close, where a mark's neighbours decide what it is", () => {
    const piece = fc.constantFrom(
      "a", "B", "7", "é", "😀", "𝔘", "咖", " ", " ", " ", "\n", "\n\n", "  \n", ".", ",", ":", "!", "?", ";", "(", ")", "'", '"', "-",
      "*", "**", "_", "__", "~~", "~", "`", "[", "]", "[1]", "[23]", "[a](u)", "[1](u)", "(u)", "#", "## ", "@", "www.", "https://", "x.org",
    );
    let read = 0;
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        if (expectScanAgrees(pieces.join("")).whole) read++;

      }),
      { numRuns: 20000 },
    );
    expect(read).toBeGreaterThan(1000);
  });

  test.each([
    ["emphasis across a line", "Brew **the water\nyou** use.", "Brew the water you use."],
    ["a heading interrupting a paragraph", "Para line\n## Heading\nnext", "Para line Heading next"],
    ["a link and a citation", "Read [the guide](https://e.com/g) [2].", "Read the guide."],
    ["a code span kept as written", "Run `a<b&c` now", "Run a<b&c now"],
    ["a strikethrough and emphasis at a line start", "*Hardness* and ~~old~~ __new__", "Hardness and old new"],
  ])("reads %s as the lexer does", (_what, body, text) => {
    expect(plainTextOf(body)).toBe(text);
    expect(scannedPlainTextOf(body, true)).toBe(text);
  });

  test.each([
    ["a URL swallowing marks", "see https://a.org/x[1](y) z"],
    ["an intraword underscore", "snake_case words"],
    ["a definition anywhere", "Text [1].\n\n[1]: https://e.com"],
    ["a list", "Text\n\n- item"],
    ["a closing heading run", "## Title #"],
    ["a tab", "a\tb"],
    ["CRLF", "a\r\nb"],
    ["a no-break space", "a\u00a0b"],
    ["an entity", "Fish &amp; chips"],
    ["HTML", "a <b>c</b>"],
    ["an image", "![a](/i.png) b"],
  ])("leaves %s to the lexer", (_what, body) => {
    expect(scannedPlainTextOf(body, true)).toBeUndefined();
  });
});

describe("prose-scan on bench-style and demo posts", () => {
  test("bench-style posts (bench/post.ts): the same excerpt, and the first part read by the scanner", () => {
    let scanned = 0;
    const posts = 1500;
    for (let index = 1; index <= posts; index++) {
      const post = parsePost(`bench-${index}.md`, renderPost("bench", 42, index).text).post;
      expect(post).toBeDefined();
      const body = post!.body;
      const read = expectScanAgrees(firstPart(body));
      if (read.whole || read.start) scanned++;
      expect(deriveExcerpt(body)).toBe(deriveExcerptByLexer(body));
      expect([undefined, deriveExcerptByLexer(body)]).toContain(scannedExcerpt(body));
    }
    // The bench corpus is what the shortcut is for: if it stops reading these, it buys nothing.
    expect(scanned / posts).toBeGreaterThan(0.99);
  });

  test("every post of the demo: the same excerpt", () => {
    const files = readdirSync(DEMO_CONTENT, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".md"));
    expect(files.length).toBeGreaterThan(10);
    let scanned = 0;
    for (const file of files) {
      const post = parsePost(file, readFileSync(path.join(DEMO_CONTENT, file), "utf8")).post;
      expect(post, file).toBeDefined();
      const body = post!.body;
      const read = expectScanAgrees(firstPart(body));
      if (read.whole || read.start) scanned++;
      expect(deriveExcerpt(body), file).toBe(deriveExcerptByLexer(body));
      expect([undefined, deriveExcerptByLexer(body)], file).toContain(scannedExcerpt(body));
    }
    // Hand-written posts open with plain paragraphs too (16 of 18 when written).
    expect(scanned / files.length).toBeGreaterThan(0.5);
  });
});

describe("cutAtWord counting in place", () => {
  /** cutAtWord as it was, splitting the text into code points: the cut it must still make. */
  function cutBySplitting(text: string, max = EXCERPT_MAX): string {
    const head = text.length > 2 * (max + 1) ? text.slice(0, 2 * (max + 1)) : text;
    const chars = Array.from(head);
    if (head === text && chars.length <= max) return text;
    const room = chars.slice(0, max - 1).join("");
    const endsAtWord = /\s/.test(chars[max - 1] ?? "");
    const lastSpace = room.lastIndexOf(" ");
    const cut = endsAtWord ? room : lastSpace > 0 ? room.slice(0, lastSpace) : room;
    return cut.replace(/[\s,;:.\-–—]+$/u, "") + "…";
  }

  test("cuts as the splitting version did, lone surrogates and astral characters included", () => {
    const piece = fc.constantFrom("a", "bc", "word", " ", " ", "  ", "\u00a0", "\u2003", ",", ".", ";", ":", "-", "–", "—", "…", "😀", "𝔘", "咖", "é", "\ud800", "\udc00", "\t", "\n");
    const text = fc.oneof(
      fc.array(piece, { maxLength: 300 }).map((p) => p.join("")),
      fc.tuple(fc.integer({ min: 190, max: 210 }), fc.array(piece, { maxLength: 6 })).map(([n, tail]) => "x".repeat(n) + tail.join("")),
      fc.tuple(fc.integer({ min: 95, max: 105 }), fc.array(piece, { maxLength: 6 })).map(([n, tail]) => "😀".repeat(n) + tail.join("") + "😀".repeat(n)),
      fc.string({ unit: "binary", maxLength: 450 }),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(cutAtWord(t)).toBe(cutBySplitting(t));
      }),
      { numRuns: 20000 },
    );
  });
});
