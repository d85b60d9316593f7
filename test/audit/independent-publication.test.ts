/**
 * The audit decides what may be published on its own (D1: status `published`
 * and a publish instant not after the build; a date alone is 00:00 UTC, a
 * date-time without offset is UTC), from the posts as written: a renderer
 * that publishes what it must not is refused, not vouched for.
 *
 * The renderer's bug is planted by replacing its `stateOf` for this file; the
 * build, the files, the database and the audit are the real ones.
 */
import { readlink } from "node:fs/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { fileOf, type Route } from "../../src/api-paths.js";
import { hiddenStateOf } from "../../src/audit/publication.js";
import { AuditFailedError } from "../../src/errors.js";
import type { ContentList } from "../../src/model/api.js";
import { buildFixture, fixturesRemovedAfterEach, type Fixture } from "../fixtures/build-fixture.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { hashTree, readTreeJson } from "../fixtures/tree.js";

const renderer = vi.hoisted(() => ({ publishesEverything: false }));
vi.mock("../../src/render/contents.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/render/contents.js")>();
  return {
    ...actual,
    stateOf: (...args: Parameters<typeof actual.stateOf>) => (renderer.publishesEverything ? "published" : actual.stateOf(...args)),
  };
});

// A zone far from UTC, so that reading a date or a date-time as local time shows.
const zone = process.env.TZ;
beforeAll(() => {
  process.env.TZ = "Asia/Tokyo";
});
afterAll(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

const NOW = new Date("2026-03-01T07:00:00Z");
const org = "acme";

/** Published at NOW by D1, each right at a boundary. */
const DUE = [
  { id: "due-by-date", publishedAt: "2026-03-01" },
  { id: "due-at-now", publishedAt: "2026-03-01T07:00" },
  { id: "due-with-offset", publishedAt: "2026-03-01T09:00:00+02:00" },
];
/** Not published at NOW, and why. */
const HIDDEN = [
  { id: "a-draft", publishedAt: "2026-01-10", status: "draft", state: "draft" },
  { id: "an-archived", publishedAt: "2026-01-10", status: "archived", state: "archived" },
  { id: "due-tomorrow", publishedAt: "2026-03-02", status: "published", state: "scheduled" },
  { id: "due-in-a-millisecond", publishedAt: "2026-03-01T07:00:00.001", status: "published", state: "scheduled" },
  { id: "due-a-second-later-with-offset", publishedAt: "2026-03-01T08:00:01+01:00", status: "published", state: "scheduled" },
];

const { orgFixture } = fixturesRemovedAfterEach();
let site: Fixture;

/** The three files of a post, as the interface lays them out (its slug is its id). */
const filesOf = (id: string) =>
  (
    [
      { kind: "content", orgId: org, id },
      { kind: "contentBySlug", orgId: org, slug: id },
      { kind: "references", orgId: org, id },
    ] as Route[]
  ).map(fileOf);

beforeEach(async () => {
  renderer.publishesEverything = false;
  site = await orgFixture(org);
  for (const post of DUE) await writePost(site, `${org}/${post.id}.md`, postMeta(post.id, { publishedAt: post.publishedAt }));
  await buildFixture(site, { now: NOW });
  for (const post of HIDDEN) {
    await writePost(site, `${org}/${post.id}.md`, postMeta(post.id, { publishedAt: post.publishedAt, status: post.status }));
  }
});

describe("the audit's own reading of D1", () => {
  test.each([
    ["a date alone is 00:00 UTC: not yet at 23:59:59.999 UTC the day before", "2026-03-01", "2026-02-28T23:59:59.999Z", "scheduled"],
    ["a date alone is 00:00 UTC: published at that instant", "2026-03-01", "2026-03-01T00:00:00Z", null],
    ["a date-time without offset is UTC", "2026-03-01T07:00", "2026-03-01T06:59:59.999Z", "scheduled"],
    ["a date-time without offset is UTC, published at that instant", "2026-03-01T07:00", "2026-03-01T07:00:00Z", null],
    ["a date-time with an offset is that instant", "2026-03-01T09:00:00+02:00", "2026-03-01T06:59:59.999Z", "scheduled"],
    ["a date-time with Z and a fraction is that instant", "2026-03-01T07:00:00.250Z", "2026-03-01T07:00:00.250Z", null],
  ])("%s", (_rule, publishedAt, now, expected) => {
    expect(hiddenStateOf({ status: "published", publishedAt }, Date.parse(now))).toBe(expected);
  });

  test("drafts and archived posts are never published, whatever their date", () => {
    const long = Date.parse("2100-01-01T00:00:00Z");
    expect(hiddenStateOf({ status: "draft", publishedAt: "2026-01-10" }, long)).toBe("draft");
    expect(hiddenStateOf({ status: "archived", publishedAt: "2026-01-10" }, long)).toBe("archived");
  });
});

describe("a renderer that publishes every post", () => {
  test("fails the build's audit, naming every file of each draft, archived and scheduled post; the live tree stays", async () => {
    const before = { hash: await hashTree(site.out), link: await readlink(site.out) };
    renderer.publishesEverything = true;

    const error = await buildFixture(site, { now: NOW }).then(
      () => expect.unreachable("the audit vouched for a tree with unpublished posts"),
      (e: unknown) => e as AuditFailedError,
    );
    expect(error).toBeInstanceOf(AuditFailedError);
    const contents = fileOf({ kind: "contents", orgId: org });
    const named = new Set(error.problems.map((p) => p.where));
    expect([...named].sort()).toEqual([contents, ...HIDDEN.flatMap((p) => filesOf(p.id))].sort());
    for (const post of HIDDEN) {
      expect(error.problems).toContainEqual({
        where: fileOf({ kind: "content", orgId: org, id: post.id }),
        message: expect.stringMatching(new RegExp(`^serves post "${post.id}", which is ${post.state}: only published posts`)),
      });
    }
    expect({ hash: await hashTree(site.out), link: await readlink(site.out) }).toEqual(before);
  });
});

test("with the renderer right, the same posts build and the audit agrees on every boundary", async () => {
  await buildFixture(site, { now: NOW });
  const list = await readTreeJson<ContentList>(site.out, fileOf({ kind: "contents", orgId: org }));
  expect(list.items.map((item) => item.id).sort()).toEqual(DUE.map((p) => p.id).sort());
});
