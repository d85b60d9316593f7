/**
 * D3: the excerpt derived from a markdown body when the source gives none.
 * Held against D3 itself, never against a copy of the code: hand-written
 * examples with their excerpts written out, D3's cut written the plain way
 * (whole words while they fit) for any body, and bodies built from words, whose
 * plain text is known without reading markdown.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { BODY_READ_MAX, EXCERPT_MAX, cutAtWord } from "../../src/render/excerpt.js";
import { deriveExcerpt, plainTextOf } from "../../src/render/excerpt-lexer.js";

const codePoints = (s: string) => [...s].length;

describe("plainTextOf", () => {
  test("markdown syntax is removed and the prose kept", () => {
    expect(plainTextOf("# Title\n\nSome **bold**, *italic* and `code` with a [link](https://x.example).")).toBe(
      "Title Some bold, italic and code with a link.",
    );
  });

  test("lists, quotes and hard breaks become plain words separated by spaces", () => {
    expect(plainTextOf("> Quoted line\n\n- one\n- two\n\nLine one  \nline two")).toBe("Quoted line one two Line one line two");
  });

  test("[N] citation markers are removed, with no space left before punctuation", () => {
    expect(plainTextOf("Coffee is 98% water [1]. Roast matters [2][12], too.")).toBe("Coffee is 98% water. Roast matters, too.");
  });

  test("[N] markers are removed even when the body defines them as link references", () => {
    // Older posts keep their references in the body: `[1]` then `[1]: https://…` at the end.
    const body = "Coffee is 98% water [1] and more.\n\n[1]: https://example.com/water\n";
    expect(plainTextOf(body)).toBe("Coffee is 98% water and more.");
  });

  test("brackets that are not citation markers stay", () => {
    expect(plainTextOf("Press [Enter] to brew.")).toBe("Press [Enter] to brew.");
  });

  test("code blocks, tables, HTML and images are left out", () => {
    const body = [
      "Before.",
      "",
      "```js",
      "const secret = 1;",
      "```",
      "",
      "| a | b |",
      "|---|---|",
      "| cell | cell |",
      "",
      "<div>markup</div>",
      "",
      "![alt text](/img.png) After.",
    ].join("\n");
    expect(plainTextOf(body)).toBe("Before. After.");
  });
});

describe("cutAtWord", () => {
  test("text of at most 200 code points is returned unchanged", () => {
    const exactly = "a".repeat(EXCERPT_MAX);
    expect(cutAtWord(exactly)).toBe(exactly);
    expect(cutAtWord("short text")).toBe("short text");
  });

  test("lengths count code points: 199 emoji are not cut", () => {
    const emoji = "😀".repeat(199); // 398 UTF-16 units
    expect(cutAtWord(emoji)).toBe(emoji);
  });

  test("longer text is cut at a word boundary, at most 200 code points with … appended", () => {
    const words = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ");
    const cut = cutAtWord(words);
    expect(cut.endsWith("…")).toBe(true);
    expect(codePoints(cut)).toBeLessThanOrEqual(EXCERPT_MAX);
    const kept = cut.slice(0, -1);
    expect(words.startsWith(kept)).toBe(true);
    // The cut falls between two words: the next character of the source is a space.
    expect(words[kept.length]).toBe(" ");
    // And not needlessly early: the next word would not have fitted.
    const nextWord = words.slice(kept.length + 1).split(" ")[0] ?? "";
    expect(codePoints(`${kept} ${nextWord}…`)).toBeGreaterThan(EXCERPT_MAX);
  });

  test("emoji text is cut by code points, never splitting a surrogate pair", () => {
    const text = "😀 ".repeat(150).trim(); // 299 code points
    const cut = cutAtWord(text);
    expect(codePoints(cut)).toBeLessThanOrEqual(EXCERPT_MAX);
    expect(codePoints(cut)).toBeGreaterThan(190);
    expect(cut.isWellFormed()).toBe(true);
    expect(cut.endsWith("😀…")).toBe(true);
  });

  test("a single word longer than the limit is cut hard", () => {
    const cut = cutAtWord("x".repeat(500));
    expect(cut).toBe(`${"x".repeat(EXCERPT_MAX - 1)}…`);
  });

  test("no dangling punctuation before the ellipsis", () => {
    const text = `${"abcd ".repeat(39)}abcd, ${"efgh ".repeat(20)}`;
    const cut = cutAtWord(text);
    expect(cut).not.toMatch(/[,;:.\s]…$/);
  });
});

describe("deriveExcerpt", () => {
  test("a short body becomes its plain text", () => {
    expect(deriveExcerpt("## Hello\n\nA *short* post [1].\n")).toBe("Hello A short post.");
  });

  test("a long body gives at most 200 code points of its opening prose", () => {
    const paragraph = "Coffee roasting is a craft of time and temperature. ".repeat(10);
    const body = `# Roasting\n\n${paragraph}\n\n${"More text follows here. ".repeat(500)}`;
    const excerpt = deriveExcerpt(body);
    expect(codePoints(excerpt)).toBeLessThanOrEqual(EXCERPT_MAX);
    expect(excerpt.startsWith("Roasting Coffee roasting is a craft of time and temperature.")).toBe(true);
    expect(excerpt.endsWith("…")).toBe(true);
  });

  test("an empty body gives an empty excerpt", () => {
    expect(deriveExcerpt("")).toBe("");
  });
});


// ---------------------------------------------------------------------------
// D3 written out on its own, to hold the code against: the plain text split
// into words, as many whole words as fit in 199 code points (200 with the
// `…`), punctuation left dangling at the cut dropped. A text with no space in
// its first 200 code points (one long word, or CJK written without spaces) has
// no word boundary to cut at: it is cut after 199 code points.

const ELLIPSIS = "…";
const DANGLING = /[\s,;:.\-–—]+$/u;

function excerptByWords(plain: string): string {
  if (codePoints(plain) <= EXCERPT_MAX) return plain;
  let kept = "";
  for (const word of plain.split(" ")) {
    const longer = kept === "" ? word : `${kept} ${word}`;
    if (codePoints(longer) > EXCERPT_MAX - 1) break;
    kept = longer;
  }
  if (kept === "") kept = [...plain].slice(0, EXCERPT_MAX - 1).join("");
  return kept.replace(DANGLING, "") + ELLIPSIS;
}

describe("deriveExcerpt, by example", () => {
  const words = (word: string, n: number) => Array.from({ length: n }, () => word).join(" ");
  /** A fenced code block of at least `chars` characters. */
  const codeBlock = (chars: number) => `\`\`\`\n${"code line\n".repeat(Math.ceil(chars / 10))}\`\`\``;
  test.each([
    ["a heading and emphasis lose their marks", "# Cold brew\n\nSteep the *coarse* grounds **overnight**, _slowly_.", "Cold brew Steep the coarse grounds overnight, slowly."],
    ["a setext heading", "Cold brew\n=========\n\nSteep overnight.", "Cold brew Steep overnight."],
    ["a link keeps its text, an autolink its address", 'Read [our guide](https://example.com/g "Guide") or <https://example.com>.', "Read our guide or https://example.com."],
    ["a reference link defined at the end keeps its text", "See [the guide][g] first.\n\n[g]: https://example.com/g", "See the guide first."],
    ["an image is left out, its alt text too", "![A drum roaster](/img/drum.jpg) The drum turns.", "The drum turns."],
    ["a code span is kept as written, a code block left out", "Run `brew --cold` first.\n\n```sh\nbrew --cold\n```\n\nThen wait.", "Run brew --cold first. Then wait."],
    ["list items become words in order", "- Beans\n- Water\n\n1. Grind\n2. Steep", "Beans Water Grind Steep"],
    ["task list boxes are left out", "- [ ] Grind\n- [x] Steep", "Grind Steep"],
    ["HTML blocks and comments are left out, inline tags lose their marks", '<div class="note">\nHidden markup\n</div>\n\n<!-- a note -->\n\nText with <em>inline</em> tags.', "Text with inline tags."],
    ["a table is left out", "Before.\n\n| a | b |\n|---|---|\n| c | d |\n\nAfter.", "Before. After."],
    ["[N] markers go, defined or not, with no space left before punctuation", "Coffee is 98% water [1], mostly [2][13].\n\n[1]: https://example.com/1", "Coffee is 98% water, mostly."],
    ["a marker that removing one leaves goes too", "A [[1]2] B", "A B"],
    ["brackets that are no marker stay", "Press [Enter] to brew.", "Press [Enter] to brew."],
    ["character references are decoded, escapes are literal", "Fish &amp; chips &mdash; 2 \\* 3 &lt; 7", "Fish & chips — 2 * 3 < 7"],
    ["strikethrough loses its marks", "~~Old~~ New price", "Old New price"],
    ["quotes and hard breaks are plain words", "> Brew slowly.\n> Then serve.\n\nLine one  \nline two\\\nline three", "Brew slowly. Then serve. Line one line two line three"],
    ["a body with no prose gives an empty excerpt", "```\nonly code\n```", ""],
    ["prose after a long code block is found", `\`\`\`\n${"code line\n".repeat(400)}\`\`\`\n\nLate prose.`, "Late prose."],
    ["exactly 200 code points are kept whole", "a".repeat(200), "a".repeat(200)],
    ["201 code points of one word are cut hard after 199", "a".repeat(201), `${"a".repeat(199)}…`],
    ["a first word longer than the limit is cut hard", `${"x".repeat(250)} after`, `${"x".repeat(199)}…`],
    ["a long word after a short one is left out whole", `Short ${"y".repeat(250)}`, "Short…"],
    ["CJK written without spaces is one long word, cut hard by code points", "咖".repeat(250), `${"咖".repeat(199)}…`],
    ["CJK with spaces is cut between words", words("咖啡", 80), `${words("咖啡", 66)}…`],
    ["emoji count one code point each", words("😀", 150), `${words("😀", 100)}…`],
    ["199 emoji are not cut", "😀".repeat(199), "😀".repeat(199)],
    ["a word ending exactly at 199 code points is kept", `${"abcd ".repeat(39)}efg hij`, `${"abcd ".repeat(39)}efg…`],
    ["punctuation left dangling at the cut is dropped", `${"abcd ".repeat(39)}efg, hij`, `${"abcd ".repeat(39)}efg…`],
    // How much is read: up to BODY_READ_MAX characters, and the definitions of the rest.
    ["prose past the characters read is not found", `${codeBlock(BODY_READ_MAX)}\n\nLate prose.`, ""],
    ["a lone [ on a line before a definition does not hide it from the opening part", `Read [1][] ${"word ".repeat(130)}\n\n[\n\n[1]: https://example.com/1`, `Read 1 ${"word ".repeat(37)}word…`],
    ["a reference defined past the characters read still counts", `${codeBlock(BODY_READ_MAX / 2)}\n\nRead [the guide][g].\n\n${codeBlock(BODY_READ_MAX)}\n\n[g]: https://example.com/g`, "Read the guide."],
  ])("%s", (_rule, body, expected) => {
    expect(deriveExcerpt(body)).toBe(expected);
  });

  test("a body nesting thousands deep, which marked's lexer cannot read, gets the excerpt of its start: no crash", () => {
    const deep = "- ".repeat(3_000);
    expect(deriveExcerpt(`${deep}x`)).toBe("");
    expect(deriveExcerpt(`Prose first.\n\n${deep}x`)).toBe("Prose first.");
  });
});

describe("deriveExcerpt on any body", () => {
  // Pieces of markdown in any order: prose, every kind of mark, and what reaches
  // across blank lines (fences and comments left open, link reference definitions).
  const piece = fc.constantFrom(
    "roast", "bean", "咖啡", "é", "😀", "𝔘", "x".repeat(40), "y".repeat(230), ".", ",", "—",
    " ", " ", " ", "\n", "\n\n", "\n\n\n", "  \n",
    "[1]", "[12]", "[a]", "[b][a]", "[1][]", "[x][1]", "[", "]", "[[3]", "4]", "*", "**", "_", "`", "~~", "\\",
    "# ", "> ", "- ", "1. ", "- [ ] ", "---", "|", "    ", "&amp;", "&#x1F600;", "&nbsp;",
    "![alt](/i.png)", "[link](https://example.com/l)", "<em>", "</em>", "<div>", "<!--", "-->", "```", "~~~",
    "[a]: https://example.com/a", "[1]: https://example.com/1",
    `\`\`\`\n${"code line\n".repeat(40)}\`\`\``, `<!-- ${"note ".repeat(80)}-->`,
  );
  const bodies = fc.array(piece, { maxLength: 500, size: "max" }).map((pieces) => pieces.join(""));

  test("is the plain text cut by D3's rule: whole when at most 200 code points, else whole words and …", () => {
    fc.assert(
      fc.property(bodies, (body) => {
        fc.pre(body.length <= BODY_READ_MAX);
        expect(deriveExcerpt(body)).toBe(excerptByWords(plainTextOf(body)));
      }),
      { numRuns: 1500 },
    );
  });

  test("holds at most 200 code points, no [N] marker, no run or edge of whitespace", () => {
    fc.assert(
      fc.property(bodies, (body) => {
        const excerpt = deriveExcerpt(body);
        expect(codePoints(excerpt)).toBeLessThanOrEqual(EXCERPT_MAX);
        expect(excerpt).not.toMatch(/\[\d+\]/);
        expect(excerpt).not.toMatch(/^\s|\s$|\s\s|[\t\n\r]/);
        expect(excerpt.isWellFormed()).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });
});

describe("plainTextOf on bodies whose plain text is known", () => {
  // Each body is built with the words it must give, so the expected plain text
  // needs no markdown reader: marks around words, prose blocks in order, and
  // blocks that give nothing (code, HTML, comments, tables, rules, images, definitions).
  const WORDS = ["roast", "bean", "water", "grind", "Kaffee", "2024", "é", "咖啡", "焙煎", "😀", "𝔘", "x".repeat(30)];
  interface Piece {
    md: string;
    /** The plain words, given whether reference `r1` is defined somewhere in the body. */
    words: (defined: boolean) => string[];
  }
  const word = fc.constantFrom(...WORDS);
  const plainWord = word.map((w): Piece => ({ md: w, words: () => [w] }));
  const markedWord = fc
    .tuple(word, fc.constantFrom("*%*", "**%**", "_%_", "~~%~~", "`%`", "[%](https://example.com/p)", "<em>%</em>", "[%][r1]"))
    .map(([w, form]): Piece => ({
      md: form.replace("%", w),
      // Undefined, `[w][r1]` is text, and `[2024]` in it a citation marker.
      words: (defined) => [form === "[%][r1]" && !defined ? `[${w}][r1]`.replace(/\[\d+\]/, "") : w],
    }));
  const silent = fc.constantFrom("[3]", "[27]", "![alt text](/i.png)").map((md): Piece => ({ md, words: () => [] }));
  const inline = fc.array(fc.oneof({ weight: 4, arbitrary: plainWord }, { weight: 3, arbitrary: markedWord }, { weight: 1, arbitrary: silent }), {
    maxLength: 24,
  });
  // A plain word first: no block starts with a mark that could make it another kind of block.
  const line = fc.tuple(plainWord, inline).map(([first, rest]) => [first, ...rest]);
  const join = (pieces: Piece[], glue = " "): Piece => ({
    md: pieces.map((p) => p.md).join(glue),
    words: (defined) => pieces.flatMap((p) => p.words(defined)),
  });
  const prefixed = (marker: string) => line.map((l): Piece => ({ ...join(l), md: `${marker}${join(l).md}` }));
  const prose = fc.oneof(
    fc.tuple(line, fc.constantFrom(" ", "\n")).map(([l, glue]) => join(l, glue)),
    prefixed("## "),
    prefixed("> "),
    fc.tuple(prefixed("- "), prefixed("- ")).map(([a, b]) => join([a, b], "\n")),
    fc.tuple(prefixed("1. "), prefixed("2. ")).map(([a, b]) => join([a, b], "\n")),
  );
  const nothing = fc
    .constantFrom(
      "```\nroast [3] bean\n```",
      `~~~js\n${"const cup = 1;\n".repeat(60)}~~~`,
      "<div>\nroast bean\n</div>",
      "<!-- roast bean -->",
      "| roast | bean |\n|---|---|\n| water | grind |",
      "---",
      "![A drum](/img/drum.jpg)",
      "[3]: https://example.com/3",
      "[r1]: https://example.com/r1",
    )
    .map((md): Piece => ({ md, words: () => [] }));
  const body = fc
    .tuple(fc.array(fc.oneof({ weight: 3, arbitrary: prose }, { weight: 1, arbitrary: nothing }), { maxLength: 40 }), fc.constantFrom("\n\n", "\n\n\n"))
    .map(([blocks, gap]) => {
      const md = blocks.map((b) => b.md).join(gap);
      const defined = /^\[r1\]:/m.test(md);
      return { md, plain: blocks.flatMap((b) => b.words(defined)).join(" ") };
    });

  test("gives exactly the words the body was built from, and the excerpt cut from them", () => {
    fc.assert(
      fc.property(body, ({ md, plain }) => {
        expect(plainTextOf(md)).toBe(plain);
        expect(deriveExcerpt(md)).toBe(excerptByWords(plain));
      }),
      { numRuns: 1500 },
    );
  });
});
