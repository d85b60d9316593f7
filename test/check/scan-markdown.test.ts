import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { scanMarkdown } from "../../src/check/scan-markdown.js";

// The blanking rule written the plain way, a character at a time: the scanner must find exactly what it finds.
function blankByDefinition(line: string, inComment: boolean): { text: string; inComment: boolean } {
  let out = "";
  let i = 0;
  while (i < line.length) {
    if (inComment) {
      const end = line.indexOf("-->", i);
      if (end === -1) return { text: out + " ".repeat(line.length - i), inComment: true };
      out += " ".repeat(end + 3 - i);
      i = end + 3;
      inComment = false;
    } else if (line.startsWith("<!--", i)) {
      out += "    ";
      i += 4;
      inComment = true;
    } else if (line[i] === "\\" && i + 1 < line.length) {
      out += "  ";
      i += 2;
    } else if (line[i] === "`") {
      let run = 0;
      while (line[i + run] === "`") run++;
      const ticks = "`".repeat(run);
      let close = line.indexOf(ticks, i + run);
      while (close !== -1 && line[close + run] === "`") close = line.indexOf(ticks, close + run + 1);
      if (close === -1) {
        out += ticks;
        i += run;
      } else {
        out += " ".repeat(close + run - i);
        i = close + run;
      }
    } else {
      out += line[i];
      i++;
    }
  }
  return { text: out, inComment };
}

const MARKER = /(?<!\\)\[(\d{1,6})\](?!\()/g;

/** Citation markers by the plain blanking, for lines that neither open a fence nor define a link. */
function markersByDefinition(body: string, firstLine: number): { n: number; line: number }[] {
  const markers: { n: number; line: number }[] = [];
  let inComment = false;
  body.split(/\r?\n/).forEach((raw, index) => {
    const blanked = blankByDefinition(raw, inComment);
    inComment = blanked.inComment;
    for (const match of blanked.text.matchAll(MARKER)) markers.push({ n: Number(match[1]), line: firstLine + index });
  });
  return markers;
}

describe("scanMarkdown's blanking of code spans, comments and escapes", () => {
  const piece = fc.constantFrom("[1]", "[2]", "[12]", "`", "``", "`[3]`", "<!--", "-->", "<!-- [4] -->", "\\[5]", "\\", "<b>", "text ", " ", "\n", "é", "[6](x)", "-");
  test("finds exactly the markers the character-by-character rule finds", () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), (parts) => {
        // Every line starts with "x ", so none opens a fence or defines a link.
        const body = parts.join("").split("\n").map((line) => `x ${line}`).join("\n");
        expect(scanMarkdown(body, 5).markers).toEqual(markersByDefinition(body, 5));
      }),
      { numRuns: 3000 },
    );
  });
});
