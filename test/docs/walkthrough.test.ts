/**
 * docs/walkthrough.md, run as a reader would run it (test/fixtures/doc-run.ts
 * says how): its `git clone` and `npm install` block is not run, nor is
 * installing sqlite3; every other block is, and every output it shows is
 * compared with what the commands printed.
 */
import { describe, expect, it } from "vitest";
import { compareOutput } from "../fixtures/doc-blocks.js";
import { describePageRun, pageSteps, SKIPPABLE } from "../fixtures/doc-run.js";

const PAGE = "docs/walkthrough.md";
const steps = pageSteps(PAGE);

describePageRun(PAGE, steps);

describe(`what ${PAGE} leaves out, and how its outputs are compared`, () => {
  it("leaves out only getting the code and installing tools", () => {
    const skipped = steps.filter((step) => step.kind === "skip");
    expect(skipped.length).toBeGreaterThan(0);
    for (const step of skipped) {
      for (const line of step.code.split("\n")) expect(line.trim(), `${PAGE}:${step.line}`).toMatch(SKIPPABLE);
    }
  });

  const shown = "HTTP/1.1 200 OK\n…\n{\"id\":\"alder\",\"name\":\"…\"}";

  it("accepts elided lines and text", () => {
    expect(compareOutput(shown, "HTTP/1.1 200 OK\r\nDate: x\r\nETag: y\r\n\r\n{\"id\":\"alder\",\"name\":\"Alder & Oak\"}\n")).toBeNull();
  });

  it("refuses a changed value, a missing line and an extra line", () => {
    expect(compareOutput(shown, 'HTTP/1.1 200 OK\n{"id":"oak","name":"Oak"}')).not.toBeNull();
    expect(compareOutput(shown, 'HTTP/1.1 401 Unauthorized\n{"id":"alder","name":"Oak"}')).not.toBeNull();
    expect(compareOutput(shown, 'HTTP/1.1 200 OK\n{"id":"alder","name":"Oak"}\nmore')).not.toBeNull();
  });
});
