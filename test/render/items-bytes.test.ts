/**
 * A list or a page as bytes, from its items' bytes, and the proof the audit
 * relies on (audit/inspector.ts): that given bytes are exactly the items
 * joined, however the items lie in memory.
 */
import { describe, expect, test } from "vitest";
import { isItemsBytes, itemsBytes, itemViews, pagesOf } from "../../src/render/pages.js";

const items = ["1", '{"a":"x,y"}', "[]", '"q"', '{"b":[1,2]}'].map((text) => Buffer.from(text));

describe("isItemsBytes", () => {
  test("holds for a list, for each page of its views, and for items in buffers of their own", () => {
    const list = itemsBytes(items, "]}");
    const views = itemViews(list, items);
    expect(isItemsBytes(list, { items: views, tail: "]}" })).toBe(true);
    expect(isItemsBytes(list, { items, tail: "]}" })).toBe(true);
    for (const { bytes, parts } of pagesOf(views, 2)) expect(isItemsBytes(bytes(), parts)).toBe(true);
    // Every second item, as a category's pages take them: views that do not follow one another.
    const scattered = [views[0]!, views[2]!, views[4]!];
    expect(isItemsBytes(itemsBytes(scattered, "]}"), { items: scattered, tail: "]}" })).toBe(true);
    expect(isItemsBytes(itemsBytes([], "]}"), { items: [], tail: "]}" })).toBe(true);
  });

  test("fails for any other bytes: an item changed, missing or added, another separator, another tail", () => {
    const list = itemsBytes(items, "]}");
    const views = itemViews(list, items);
    const parts = { items: views, tail: "]}" };
    const other = (text: string) => Buffer.from(text);
    expect(isItemsBytes(other(list.toString().replace('"q"', '"r"')), parts)).toBe(false);
    expect(isItemsBytes(itemsBytes(items.slice(1), "]}"), parts)).toBe(false);
    expect(isItemsBytes(itemsBytes([...items, other("2")], "]}"), parts)).toBe(false);
    expect(isItemsBytes(other(list.toString().replace("[],", "[];")), parts)).toBe(false);
    expect(isItemsBytes(itemsBytes(items, "],\"x\":1}"), parts)).toBe(false);
    expect(isItemsBytes(other('{"items":'), parts)).toBe(false);
  });

  test("views that follow one another with another byte between them are not taken for a comma-joined run", () => {
    const memory = Buffer.from("1;2");
    const views = [memory.subarray(0, 1), memory.subarray(2, 3)];
    expect(isItemsBytes(Buffer.from('{"items":[1;2]}'), { items: views, tail: "]}" })).toBe(false);
    expect(isItemsBytes(Buffer.from('{"items":[1,2]}'), { items: views, tail: "]}" })).toBe(true);
  });
});
