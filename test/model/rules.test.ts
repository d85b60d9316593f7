/**
 * The value rules of D7 and D9 on their own, without a build or a server: the
 * same functions check the sources at build time and the PATCH bodies at
 * request time, so each rule is pinned here once.
 */
import { describe, expect, test } from "vitest";
import {
  SCHEMA_PATTERNS,
  codePointLength,
  hasForbiddenControl,
  isAbsoluteHttpUrl,
  isMediaUrl,
  isOrigin,
  itemIdSchema,
  normalizeNewlines,
  parsePublishDate,
  slugSchema,
} from "../../src/model/rules.js";

describe("lengths and text", () => {
  test("lengths count code points: an emoji is one, not two UTF-16 units", () => {
    expect(codePointLength("😀")).toBe(1);
    expect(codePointLength("a😀é")).toBe(3);
  });

  test("control characters: tab and newline are allowed, every other C0, DEL and C1 is not", () => {
    expect(hasForbiddenControl("a\tb\nc")).toBe(false);
    for (const c of ["\u0000", "\u0008", "\u000b", "\r", "\u001f", "\u007f", "\u0085", "\u009f"]) {
      expect(hasForbiddenControl(`a${c}b`), JSON.stringify(c)).toBe(true);
    }
    expect(hasForbiddenControl("\u00a0é😀")).toBe(false);
  });

  test("CR LF folds to LF before the control rule runs, so a Windows line break is allowed and a lone CR is not", () => {
    expect(hasForbiddenControl(normalizeNewlines("a\r\nb"))).toBe(false);
    expect(hasForbiddenControl(normalizeNewlines("a\rb"))).toBe(true);
  });

  test("the JSON Schema pattern of person text says the same as the code, with or without the u flag", () => {
    for (const flags of ["", "u"]) {
      const pattern = new RegExp(SCHEMA_PATTERNS.personText, flags);
      for (const text of ["a\tb\r\nc", "😀 é", ""]) expect(pattern.test(text), `${flags} ${JSON.stringify(text)}`).toBe(true);
      for (const text of ["a\rb", "a\u0085b", "a\ud800b", "\udc00", "\u0000"]) {
        expect(pattern.test(text), `${flags} ${JSON.stringify(text)}`).toBe(false);
      }
    }
  });
});

describe("links (D7) and media URLs (D9)", () => {
  test.each([
    "https://example.com",
    "http://example.com/a?b=c#d",
    "HTTPS://EXAMPLE.COM:8443/path",
    "https://xn--bcher-kva.example/",
  ])("accepts %s", (url) => {
    expect(isAbsoluteHttpUrl(url)).toBe(true);
    expect(new RegExp(SCHEMA_PATTERNS.httpUrl, "u").test(url)).toBe(true);
  });

  test.each([
    ["no host", "HTTP://"],
    ["credentials", "https://user:secret@example.com"],
    ["a user name", "http://user@example.com"],
    ["another scheme", "javascript:alert(1)"],
    ["a relative path", "/about"],
    ["a space", "https://exa mple.com"],
    ["a tab the URL parser would strip", "https://exa\tmple.com"],
    ["a control character", "https://example.com/\u0085"],
  ])("refuses a link with %s", (_, url) => {
    expect(isAbsoluteHttpUrl(url)).toBe(false);
    expect(new RegExp(SCHEMA_PATTERNS.httpUrl, "u").test(url)).toBe(false);
  });

  test("a media URL is an absolute http(s) URL or a site path with one leading slash", () => {
    expect(isMediaUrl("/media/hero.jpg")).toBe(true);
    expect(isMediaUrl("https://cdn.example.com/hero.jpg")).toBe(true);
    expect(isMediaUrl("//evil.example/x.jpg")).toBe(false);
    expect(isMediaUrl("/media\\..\\x")).toBe(false);
    expect(isMediaUrl("media/hero.jpg")).toBe(false);
    expect(isMediaUrl("/media/a b.jpg")).toBe(false);
  });

  test("an origin is scheme, host and port, nothing else", () => {
    expect(isOrigin("https://www.example.com")).toBe(true);
    expect(isOrigin("http://localhost:5173")).toBe(true);
    expect(isOrigin("https://www.example.com/")).toBe(false);
    expect(isOrigin("https://www.example.com/path")).toBe(false);
    expect(isOrigin("null")).toBe(false);
  });
});

describe("ids, slugs and dates (D9, D3)", () => {
  test("an id is 1-128 of A-Z a-z 0-9 _ -, starting with a letter or digit; by-slug is reserved", () => {
    expect(itemIdSchema.safeParse("post-0001").success).toBe(true);
    expect(itemIdSchema.safeParse("A".repeat(128)).success).toBe(true);
    expect(itemIdSchema.safeParse("A".repeat(129)).success).toBe(false);
    expect(itemIdSchema.safeParse("-post").success).toBe(false);
    expect(itemIdSchema.safeParse("a.b").success).toBe(false);
    expect(itemIdSchema.safeParse("by-slug").success).toBe(false);
  });

  test("a slug is lowercase words joined by single hyphens, at most 200 characters", () => {
    expect(slugSchema.safeParse("hello-world-2").success).toBe(true);
    expect(slugSchema.safeParse("a".repeat(200)).success).toBe(true);
    expect(slugSchema.safeParse("a".repeat(201)).success).toBe(false);
    for (const bad of ["Hello", "a--b", "-a", "a-", "a_b", ""]) expect(slugSchema.safeParse(bad).success, bad).toBe(false);
  });

  test("a date-only value is 00:00 UTC; a date-time without offset is UTC; the written date is kept", () => {
    expect(parsePublishDate("2026-03-01")).toEqual({ date: "2026-03-01", instant: Date.UTC(2026, 2, 1) });
    expect(parsePublishDate("2026-03-01T10:30")).toEqual({ date: "2026-03-01", instant: Date.UTC(2026, 2, 1, 10, 30) });
    expect(parsePublishDate("2026-03-01T00:30:00+02:00")).toEqual({ date: "2026-03-01", instant: Date.UTC(2026, 1, 28, 22, 30) });
    expect(parsePublishDate("2026-03-01T10:30:15.250Z")?.instant).toBe(Date.UTC(2026, 2, 1, 10, 30, 15, 250));
  });

  test("dates that do not exist or are malformed are refused", () => {
    for (const bad of ["2026-02-29", "2026-13-01", "2026-1-01", "2026-03-01T24:00", "2026-03-01T10:60", "01/03/2026", "2026-03-01T10:30+25:00"]) {
      expect(parsePublishDate(bad), bad).toBeNull();
    }
    expect(parsePublishDate("2028-02-29")).not.toBeNull();
  });
});
