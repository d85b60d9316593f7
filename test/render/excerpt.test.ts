/** D3: the excerpt derived from a markdown body when the source gives none. */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { EXCERPT_MAX, cutAtWord, deriveExcerpt, plainTextOf } from "../../src/render/excerpt.js";

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

describe("cutAtWord against its definition", () => {
  // The rule written the plain way (every code point of the text split): the fast version must agree.
  function byDefinition(text: string, max: number): string {
    const chars = Array.from(text);
    if (chars.length <= max) return text;
    const room = chars.slice(0, max - 1).join("");
    const endsAtWord = /\s/.test(chars[max - 1] ?? "");
    const lastSpace = room.lastIndexOf(" ");
    const cut = endsAtWord ? room : lastSpace > 0 ? room.slice(0, lastSpace) : room;
    return cut.replace(/[\s,;:.\-–—]+$/u, "") + "…";
  }
  const piece = fc.constantFrom("a", "word", " ", "  ", ".", ",", "é", "😀", "𝔘", "—", "\n", "ab😀cd", "x".repeat(30));

  test("agrees on any text of words, spaces, punctuation and astral characters", () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 400 }), fc.integer({ min: 2, max: 260 }), (parts, max) => {
        const text = parts.join("");
        expect(cutAtWord(text, max)).toBe(byDefinition(text, max));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("deriveExcerpt's short first try", () => {
  // Blocks of every kind a body holds, long enough to make the first try count, and the
  // cross-block cases: link reference definitions, fences and comments left open across blank lines.
  const words = fc.array(fc.constantFrom("roast", "bean", "water", "cup", "grind", "é", "😀", "[1]", "[a]", "[b][a]", "*x*", "`c`", "—", ".", ","), {
    minLength: 1,
    maxLength: 60,
  });
  const block = fc.oneof(
    words.map((w) => w.join(" ")),
    words.map((w) => `# ${w.join(" ")}`),
    words.map((w) => `- ${w.join(" ")}\n- ${w.slice(1).join(" ")}`),
    words.map((w) => `> ${w.join(" ")}`),
    fc.constantFrom("```", "```js\ncode [1]\n```", "<!--", "-->", "<div>", "    indented code", "[a]: https://example.com/a", "[1]: https://example.com/1", "---", "| a | b |\n|---|---|\n| c | d |"),
    // Blocks with little or no prose, so the first part's text is sometimes short.
    fc.constantFrom(`\`\`\`\n${"code line\n".repeat(40)}\`\`\``, `<!-- ${"note ".repeat(80)}-->`, "[a]: https://example.com/a"),
  );

  test("gives exactly the excerpt of the whole prefix, whatever follows the blank line", () => {
    fc.assert(
      fc.property(fc.array(block, { minLength: 4, maxLength: 30, size: "max" }), fc.constantFrom("\n\n", "\n\n\n", "\n"), (blocks, gap) => {
        const body = blocks.join(gap);
        expect(deriveExcerpt(body)).toBe(cutAtWord(plainTextOf(body)));
      }),
      { numRuns: 3000 },
    );
  });
});
