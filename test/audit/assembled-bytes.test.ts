/**
 * The proof the audit relies on (audit/inspector.ts) that a list or a page the
 * build assembled is exactly its items joined, however the items lie in
 * memory; held against the renderer's own assembly (render/pages.ts).
 */
import { describe, expect, test } from "vitest";
import { assembledBytes, isAssembledFrom } from "../../src/audit/assembled-bytes.js";
import { itemsBytes, itemViews, pagesOf } from "../../src/render/pages.js";

const items = ["1", '{"a":"x,y"}', "[]", '"q"', '{"b":[1,2]}'].map((text) => Buffer.from(text));

describe("isAssembledFrom", () => {
  test("holds for a list, for each page of its views, and for items in buffers of their own", () => {
    const list = itemsBytes(items, "]}");
    const views = itemViews(list, items);
    expect(isAssembledFrom(list, { items: views, tail: "]}" })).toBe(true);
    expect(isAssembledFrom(list, { items, tail: "]}" })).toBe(true);
    for (const { bytes, parts } of pagesOf(views, 2)) expect(isAssembledFrom(bytes(), parts)).toBe(true);
    // Every second item, as a category's pages take them: views that do not follow one another.
    const scattered = [views[0]!, views[2]!, views[4]!];
    expect(isAssembledFrom(itemsBytes(scattered, "]}"), { items: scattered, tail: "]}" })).toBe(true);
    expect(isAssembledFrom(itemsBytes([], "]}"), { items: [], tail: "]}" })).toBe(true);
  });

  test("the audit assembles a list or a page as the renderer does", () => {
    for (const some of [[], items.slice(0, 1), items]) {
      for (const tail of ["]}", '],"meta":{"pagination":{"page":1}}}']) expect(assembledBytes(some, tail)).toEqual(itemsBytes(some, tail));
    }
  });

  test("fails for any other bytes: an item changed, missing or added, another separator, another tail", () => {
    const list = itemsBytes(items, "]}");
    const views = itemViews(list, items);
    const parts = { items: views, tail: "]}" };
    const other = (text: string) => Buffer.from(text);
    expect(isAssembledFrom(other(list.toString().replace('"q"', '"r"')), parts)).toBe(false);
    expect(isAssembledFrom(itemsBytes(items.slice(1), "]}"), parts)).toBe(false);
    expect(isAssembledFrom(itemsBytes([...items, other("2")], "]}"), parts)).toBe(false);
    expect(isAssembledFrom(other(list.toString().replace("[],", "[];")), parts)).toBe(false);
    expect(isAssembledFrom(itemsBytes(items, "],\"x\":1}"), parts)).toBe(false);
    expect(isAssembledFrom(other('{"items":'), parts)).toBe(false);
  });

  test("views that follow one another with another byte between them are not taken for a comma-joined run", () => {
    const memory = Buffer.from("1;2");
    const views = [memory.subarray(0, 1), memory.subarray(2, 3)];
    expect(isAssembledFrom(Buffer.from('{"items":[1;2]}'), { items: views, tail: "]}" })).toBe(false);
    expect(isAssembledFrom(Buffer.from('{"items":[1,2]}'), { items: views, tail: "]}" })).toBe(true);
  });
});
