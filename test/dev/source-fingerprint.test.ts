/** What `cdsnap dev` compares around a build: any change to a post the build would read changes it. */
import { mkdir, mkdtemp, rm, symlink, unlink, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { fingerprintSources } from "../../src/dev/source-fingerprint.js";

let content: string;

beforeEach(async () => {
  content = await mkdtemp(path.join(os.tmpdir(), "cdsnap-fingerprint-"));
  await mkdir(path.join(content, "demo", "2026"), { recursive: true });
  await mkdir(path.join(content, "other"), { recursive: true });
  await writeFile(path.join(content, "demo", "a.md"), "---\ntitle: A\n---\n");
  await writeFile(path.join(content, "demo", "2026", "b.md"), "---\ntitle: B\n---\n");
  await writeFile(path.join(content, "other", "c.md"), "---\ntitle: C\n---\n");
  // An old time on every post: a rewrite below then moves it, however coarse the file system's clock.
  const past = new Date("2020-01-01T00:00:00Z");
  for (const rel of ["demo/a.md", "demo/2026/b.md", "other/c.md"]) await utimes(path.join(content, rel), past, past);
});

afterEach(async () => {
  await rm(content, { recursive: true, force: true });
});

describe("source fingerprint", () => {
  test("is the same for an untouched folder", async () => {
    expect(await fingerprintSources(content, undefined)).toBe(await fingerprintSources(content, undefined));
  });

  test("a post rewritten with other text of the same size changes it", async () => {
    const before = await fingerprintSources(content, ["demo"]);
    await writeFile(path.join(content, "demo", "2026", "b.md"), "---\ntitle: X\n---\n");
    expect(await fingerprintSources(content, ["demo"])).not.toBe(before);
  });

  test("a post added in a new folder, or removed, changes it", async () => {
    const before = await fingerprintSources(content, undefined);
    await mkdir(path.join(content, "demo", "new"));
    await writeFile(path.join(content, "demo", "new", "d.md"), "---\ntitle: D\n---\n");
    const added = await fingerprintSources(content, undefined);
    expect(added).not.toBe(before);
    await unlink(path.join(content, "demo", "a.md"));
    expect(await fingerprintSources(content, undefined)).not.toBe(added);
  });

  test("a dangling link fixed by creating its target changes it", async () => {
    await symlink(path.join(content, "target.md"), path.join(content, "demo", "link.md"));
    const dangling = await fingerprintSources(content, ["demo"]);
    await writeFile(path.join(content, "target.md"), "---\ntitle: T\n---\n");
    expect(await fingerprintSources(content, ["demo"])).not.toBe(dangling);
  });

  test("an organization's fingerprint ignores other organizations, dot files and files that are not posts", async () => {
    const before = await fingerprintSources(content, ["demo"]);
    await writeFile(path.join(content, "other", "c.md"), "---\ntitle: changed\n---\n");
    await writeFile(path.join(content, "demo", ".a.md.swp"), "editor state");
    await writeFile(path.join(content, "demo", "notes.txt"), "not a post");
    expect(await fingerprintSources(content, ["demo"])).toBe(before);
  });
});
