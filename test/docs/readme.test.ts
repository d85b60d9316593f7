/**
 * The README's "Your own organization in a few steps", run as a reader would
 * run it (test/fixtures/doc-run.ts says how), and its shown answer compared
 * with what the server sent.
 */
import { describe, expect, it } from "vitest";
import { describePageRun, pageSteps } from "../fixtures/doc-run.js";

const SECTION = "Your own organization in a few steps";
const steps = pageSteps("README.md", SECTION);

describe(`README.md, "${SECTION}"`, () => {
  it("has commands, a server in a second terminal, and the answer it shows", () => {
    expect(steps.map((step) => step.kind)).toEqual(["run", "background", "run"]);
    expect(steps.at(-1)?.expected).toBeDefined();
  });
});

describePageRun("README.md", steps);
