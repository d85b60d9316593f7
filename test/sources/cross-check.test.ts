/**
 * crossCheck on its own: the rules that span several sources of one
 * organization (D9), each with the exact `where` and `message` a user reads.
 * Post ids and slugs are unique across the organization's posts, drafts
 * included; a post's category is one of the organization's; block slugs and
 * category slugs are unique, whatever the database let through.
 */
import { describe, expect, test } from "vitest";
import type { PostRecord } from "../../src/model/snapshot.js";
import { crossCheck } from "../../src/sources/cross-check.js";
import { post } from "../fixtures/posts.js";
import { blockRecord, categoryRecord, orgSnapshot, postRecord } from "../fixtures/records.js";

const ORG = "acme";
const org = orgSnapshot(ORG, {
  categories: [categoryRecord("c1", "news", "News"), categoryRecord("c2", "guides", "Guides")],
  blocks: [blockRecord("hero"), blockRecord("footer")],
});

/**
 * A post of acme at `acme/<name>.md` (id and slug on lines 2 and 4, extra
 * front matter from line 8), with its id or slug replaced when given.
 */
function postAt(name: string, options: { id?: string; slug?: string; status?: string; extra?: string[] } = {}): PostRecord {
  let text = post(name, options.extra ?? [], "Body.\n", options.status ?? "published");
  if (options.id !== undefined) text = text.replace(`id: ${name}\n`, `id: ${options.id}\n`);
  if (options.slug !== undefined) text = text.replace(`slug: ${name}\n`, `slug: ${options.slug}\n`);
  return postRecord(`${ORG}/${name}.md`, text);
}

describe("crossCheck", () => {
  test("sources that break no rule have no problem", () => {
    const posts = [postAt("one", { extra: ["category: news"] }), postAt("two", { extra: ["category: guides"] }), postAt("three")];
    expect(crossCheck(org, posts)).toEqual([]);
  });

  test("an id used by two posts is reported at the later one's id line, naming the first", () => {
    expect(crossCheck(org, [postAt("a", { id: "shared" }), postAt("b", { id: "shared" })])).toEqual([
      { where: "acme/b.md:2", message: 'id: "shared" is also used by acme/a.md:2' },
    ]);
  });

  test("a slug used by two posts is reported at the later one's slug line, naming the first", () => {
    expect(crossCheck(org, [postAt("a", { slug: "same" }), postAt("b", { slug: "same" })])).toEqual([
      { where: "acme/b.md:4", message: 'slug: "same" is also used by acme/a.md:4' },
    ]);
  });

  test("drafts and archived posts count: their ids and slugs are taken too", () => {
    const posts = [postAt("draft", { status: "draft", slug: "launch" }), postAt("live", { slug: "launch" }), postAt("old", { status: "archived", id: "draft" })];
    expect(crossCheck(org, posts)).toEqual([
      { where: "acme/old.md:2", message: 'id: "draft" is also used by acme/draft.md:2' },
      { where: "acme/live.md:4", message: 'slug: "launch" is also used by acme/draft.md:4' },
    ]);
  });

  test("a third use is reported too, each against the first", () => {
    const posts = [postAt("a", { id: "x" }), postAt("b", { id: "x" }), postAt("c", { id: "x" })];
    expect(crossCheck(org, posts)).toEqual([
      { where: "acme/b.md:2", message: 'id: "x" is also used by acme/a.md:2' },
      { where: "acme/c.md:2", message: 'id: "x" is also used by acme/a.md:2' },
    ]);
  });

  test("ids differing only in case are different ids", () => {
    expect(crossCheck(org, [postAt("a", { id: "Post" }), postAt("b", { id: "post" })])).toEqual([]);
  });

  test("a category that is not one of the organization's is reported at the post's category line, listing the organization's", () => {
    const elsewhere = orgSnapshot("other", { categories: [categoryRecord("o1", "events", "Events")] });
    const posts = [postAt("a", { extra: ["tags: [x]", "category: events"] })];
    expect(crossCheck(org, posts)).toEqual([
      { where: "acme/a.md:9", message: 'category: "events" is not a category of organization acme; its categories are: guides, news' },
    ]);
    const none = orgSnapshot(ORG, { categories: [] });
    expect(crossCheck(none, posts)).toEqual([
      { where: "acme/a.md:9", message: 'category: "events" is not a category of organization acme; it has no categories yet' },
    ]);
    // The same post checked against the organization that has it.
    expect(crossCheck(elsewhere, posts)).toEqual([]);
  });

  test("a post whose key lines are unknown is named by its file alone", () => {
    const first = postAt("a", { id: "same" });
    const { lines: _lines, ...second } = postAt("b", { id: "same", extra: ["category: nowhere"] });
    expect(crossCheck(org, [first, second])).toEqual([
      { where: "acme/b.md", message: 'id: "same" is also used by acme/a.md:2' },
      { where: "acme/b.md", message: 'category: "nowhere" is not a category of organization acme; its categories are: guides, news' },
    ]);
  });

  test("a block slug used twice is reported on the later block's row, naming the first block", () => {
    const blocks = orgSnapshot(ORG, { blocks: [blockRecord("b1", { slug: "hero" }), blockRecord("b2", { slug: "hero", status: "draft" })] });
    expect(crossCheck(blocks, [])).toEqual([{ where: "blocks[org_id=acme id=b2]", message: 'slug: "hero" is also used by block b1' }]);
  });

  test("a category slug used twice is reported on the later category's row, naming the first category", () => {
    const categories = orgSnapshot(ORG, { categories: [categoryRecord("c1", "news", "News"), categoryRecord("c2", "news", "More news")] });
    expect(crossCheck(categories, [])).toEqual([
      { where: "categories[org_id=acme id=c2]", message: 'slug: "news" is also used by category c1' },
    ]);
  });

  test("every problem is listed, ids first, then slugs, categories, block slugs and category slugs", () => {
    const messy = orgSnapshot(ORG, {
      categories: [categoryRecord("c1", "news", "News"), categoryRecord("c2", "news", "News again")],
      blocks: [blockRecord("b1", { slug: "hero" }), blockRecord("b2", { slug: "hero" })],
    });
    const posts = [postAt("a", { extra: ["category: gone"] }), postAt("b", { id: "a", slug: "a" })];
    expect(crossCheck(messy, posts)).toEqual([
      { where: "acme/b.md:2", message: 'id: "a" is also used by acme/a.md:2' },
      { where: "acme/b.md:4", message: 'slug: "a" is also used by acme/a.md:4' },
      { where: "acme/a.md:8", message: 'category: "gone" is not a category of organization acme; its categories are: news' },
      { where: "blocks[org_id=acme id=b2]", message: 'slug: "hero" is also used by block b1' },
      { where: "categories[org_id=acme id=c2]", message: 'slug: "news" is also used by category c1' },
    ]);
  });
});
