import { describe, expect, it } from "vitest";
import { createProgress, styleFor } from "../../src/cli/progress.js";
import { makeFixture, removeDir } from "../fixtures/build-fixture.js";
import { insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { buildArgs, runCli } from "../fixtures/cli.js";

function fakeStream(isTTY: boolean) {
  const chunks: string[] = [];
  return { chunks, stream: { isTTY, write: (text: string) => chunks.push(text) } as unknown as NodeJS.WriteStream };
}

describe("build progress and output", () => {
  it("on a terminal the bar is redrawn in place and cleared before the report", () => {
    const { chunks, stream } = fakeStream(true);
    const progress = createProgress(stream, false);
    for (let done = 1; done <= 1000; done++) progress.update(done, 1000);
    progress.finish();
    expect(chunks.at(-2)).toMatch(/^\r\[#{30}\] 100% 1000\/1000 posts$/);
    expect(chunks.at(-1)).toBe("\r\u001b[2K");
    expect(chunks.every((c) => !c.includes("\n"))).toBe(true);
  });

  it("off a terminal it prints a plain line per quarter, and nothing for small builds or --quiet", () => {
    const plain = fakeStream(false);
    const progress = createProgress(plain.stream, false);
    for (let done = 1; done <= 1000; done++) progress.update(done, 1000);
    expect(plain.chunks).toEqual(["posts: 250/1000 (25%)\n", "posts: 500/1000 (50%)\n", "posts: 750/1000 (75%)\n", "posts: 1000/1000 (100%)\n"]);
    const small = fakeStream(false);
    const few = createProgress(small.stream, false);
    for (let done = 1; done <= 10; done++) few.update(done, 10);
    const quiet = fakeStream(true);
    const silent = createProgress(quiet.stream, true);
    for (let done = 1; done <= 1000; done++) silent.update(done, 1000);
    expect([...small.chunks, ...quiet.chunks]).toEqual([]);
  });

  it("colors only on a terminal without NO_COLOR", () => {
    expect(styleFor({ isTTY: false } as NodeJS.WriteStream).ok("x")).toBe("x");
    const saved = process.env.NO_COLOR;
    delete process.env.NO_COLOR;
    expect(styleFor({ isTTY: true } as NodeJS.WriteStream).ok("x")).toBe("\u001b[32mx\u001b[0m");
    process.env.NO_COLOR = "1";
    expect(styleFor({ isTTY: true } as NodeJS.WriteStream).ok("x")).toBe("x");
    if (saved === undefined) delete process.env.NO_COLOR;
    else process.env.NO_COLOR = saved;
  });

  it("the CLI prints phase timings in its report, plain progress lines in CI, and only errors with --quiet", async () => {
    const fx = await makeFixture();
    try {
      withDb(fx.db, (db) => insertOrg(db, { id: "acme" }));
      for (let i = 0; i < 520; i++) await writePost(fx.content, `acme/p${i}.md`, postMeta(`p${i}`));
      const loud = await runCli(buildArgs(fx));
      expect(loud.code, loud.stderr).toBe(0);
      expect(loud.stderr).toContain("posts: 520/520 (100%)");
      expect(loud.stdout).toMatch(/readPrevious \d+ ms, loadSources \d+ ms, plan \d+ ms, write \d+ ms, audit \d+ ms, publish \d+ ms/);
      expect(loud.stdout).not.toContain("\u001b[");
      await writePost(fx.content, "acme/p1.md", postMeta("p1", { title: "Changed" }));
      const quiet = await runCli(buildArgs(fx, "--quiet"));
      expect(quiet.code, quiet.stderr).toBe(0);
      expect(quiet.stdout).toBe("");
      expect(quiet.stderr).toBe("");
    } finally {
      await removeDir(fx.dir);
    }
  });
});
