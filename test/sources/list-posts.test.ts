/**
 * Which files are posts: nothing an author meant as one vanishes without a
 * word. Dangling links, link loops, folders named `*.md` and folder links that
 * lead back up or to a folder already read fail the build, naming the path and
 * what it points to; a link with another name that leads nowhere is a warning.
 * Real files and real symbolic links in a temporary folder, the library build.
 */
import { execFileSync } from "node:child_process";
import { mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { fileOf } from "../../src/api-paths.js";
import { buildFixture, buildProblems, fixturesRemovedAfterEach, type Fixture } from "../fixtures/build-fixture.js";
import { insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree, pathExists, readTreeJson } from "../fixtures/tree.js";

const { orgFixture } = fixturesRemovedAfterEach();

/** `acme` with one valid post, built once, so that each failure must leave a live tree as it was. */
async function builtFixture(): Promise<{ fx: Fixture; before: string }> {
  const fx = await orgFixture();
  await writePost(fx, "acme/first.md", postMeta("first"));
  await buildFixture(fx);
  return { fx, before: await hashTree(fx.out) };
}

async function refused(fx: Fixture, before: string): Promise<{ where: string; message: string }[]> {
  const problems = await buildProblems(fx);
  expect(await hashTree(fx.out)).toBe(before);
  return problems;
}

const acme = (fx: Fixture, ...parts: string[]) => path.join(fx.content, "acme", ...parts);

describe("listing the posts", () => {
  test("a dangling *.md link is a build error naming the link and its target", async () => {
    const { fx, before } = await builtFixture();
    await symlink("/nonexistent/gone.md", acme(fx, "gone.md"));
    expect(await refused(fx, before)).toEqual([
      { where: "acme/gone.md", message: "is a symbolic link to /nonexistent/gone.md, which does not exist; fix the link or remove it" },
    ]);
  });

  test("a loop of links, through two files or one, is a build error for each link", async () => {
    const { fx, before } = await builtFixture();
    await symlink("b.md", acme(fx, "a.md"));
    await symlink("a.md", acme(fx, "b.md"));
    await symlink("loop.md", acme(fx, "loop.md"));
    const loop = (target: string) => `is a symbolic link to ${target}, which leads back to itself through links (a loop); fix the link or remove it`;
    expect(await refused(fx, before)).toEqual([
      { where: "acme/a.md", message: loop("b.md") },
      { where: "acme/b.md", message: loop("a.md") },
      { where: "acme/loop.md", message: loop("loop.md") },
    ]);
  });

  test("a folder named *.md is a build error, not skipped", async () => {
    const { fx, before } = await builtFixture();
    await mkdir(acme(fx, "adir.md"));
    await writePost(fx, "acme/adir.md/inside.md", postMeta("inside"));
    expect(await refused(fx, before)).toEqual([
      { where: "acme/adir.md", message: "is a folder, not a post: a name ending in .md is for post files; rename it" },
    ]);
  });

  test("a named pipe called *.md is refused, not opened (which would wait forever)", async () => {
    const { fx, before } = await builtFixture();
    execFileSync("mkfifo", [acme(fx, "pipe.md")]);
    expect(await refused(fx, before)).toEqual([
      { where: "acme/pipe.md", message: "is a named pipe, not a post file: a name ending in .md is for post files; rename or remove it" },
    ]);
  });

  test("a folder link back up the tree is one error naming it, not every post read again and again", async () => {
    const { fx, before } = await builtFixture();
    await symlink("..", acme(fx, "up"));
    await mkdir(acme(fx, "2026"));
    await symlink(".", acme(fx, "2026", "self"));
    expect(await refused(fx, before)).toEqual([
      {
        where: "acme/2026/self",
        message: "links back to . (acme/2026/), a folder that holds it (a loop): its posts would be read without end; remove the link",
      },
      {
        where: "acme/up",
        message: "links back to .. (the content folder), a folder that holds it (a loop): its posts would be read without end; remove the link",
      },
    ]);
  });

  test("a second path to a folder already read is an error at the link, whichever sorts first", async () => {
    const { fx, before } = await builtFixture();
    await writePost(fx, "acme/zz-real/p.md", postMeta("p"));
    await symlink("zz-real", acme(fx, "aa-link"));
    expect(await refused(fx, before)).toEqual([
      { where: "acme/aa-link", message: "links to zz-real, which is already read as acme/zz-real/: its posts would be read twice; remove the link" },
    ]);
  });

  test("a folder link outside the content folder is refused at the link, and not walked", async () => {
    const { fx, before } = await builtFixture();
    await writePost(path.join(fx.dir, "elsewhere"), "p.md", postMeta("p"));
    await symlink(path.join(fx.dir, "elsewhere"), acme(fx, "linked"));
    expect(await refused(fx, before)).toEqual([
      { where: "acme/linked", message: `links outside the content folder (to ${path.join(fx.dir, "elsewhere")}); symbolic links must stay inside it` },
    ]);
  });

  test("folder links inside the content folder are followed, and two organizations may share one", async () => {
    const fx = await orgFixture();
    withDb(fx.db, (db) => insertOrg(db, { id: "other", slug: "other" }));
    await writePost(fx, ".shared/common.md", postMeta("common"));
    await mkdir(acme(fx), { recursive: true });
    await mkdir(path.join(fx.content, "other"));
    await symlink("../.shared", acme(fx, "shared"));
    await symlink("../.shared", path.join(fx.content, "other", "shared"));
    const report = await buildFixture(fx);
    expect(report.warnings).toEqual([]);
    for (const orgId of ["acme", "other"]) {
      const detail = await readTreeJson<{ id: string }>(fx.out, fileOf({ kind: "content", orgId, id: "common" }));
      expect(detail.id).toBe("common");
    }
  });

  test("a link of another name that leads nowhere is a warning, and the build goes on", async () => {
    const fx = await orgFixture();
    await writePost(fx, "acme/first.md", postMeta("first"));
    await symlink("/mnt/not-mounted/2024", acme(fx, "2024"));
    await symlink("b", acme(fx, "a"));
    await symlink("a", acme(fx, "b"));
    const report = await buildFixture(fx);
    expect(report.warnings).toEqual([
      {
        rule: "broken-link",
        where: "acme/2024",
        message: "is a symbolic link to /mnt/not-mounted/2024, which does not exist; it is skipped, and if it stood for a folder of posts, they are not built",
      },
      { rule: "broken-link", where: "acme/a", message: expect.stringMatching(/^is a symbolic link to b, which leads back to itself through links \(a loop\); it is skipped/) },
      { rule: "broken-link", where: "acme/b", message: expect.stringMatching(/^is a symbolic link to a, which leads back to itself through links \(a loop\); it is skipped/) },
    ]);
    expect(await pathExists(path.join(fx.out, fileOf({ kind: "content", orgId: "acme", id: "first" })))).toBe(true);
  });

  test("with --org, an organization folder that is a dangling link is a warning, not an empty organization in silence", async () => {
    const fx = await orgFixture();
    await symlink("/mnt/not-mounted/acme", path.join(fx.content, "acme"));
    const report = await buildFixture(fx, { orgs: ["acme"] });
    expect(report.warnings).toEqual([expect.objectContaining({ rule: "broken-link", where: "acme" })]);
  });

  test("a --content that is a file is a usage problem, not a crash", async () => {
    const fx = await orgFixture();
    await writePost(fx.dir, "posts.md", postMeta("p"));
    await expect(buildFixture({ ...fx, content: path.join(fx.dir, "posts.md") })).rejects.toMatchObject({
      code: "usage",
      message: expect.stringMatching(/is a file, not a folder/),
    });
  });
});
