/**
 * parsePost on its own: what a post file means (its front matter values, the
 * body, the publish date and instant, the line of every key) and, for a post
 * that breaks a rule, the problems a user reads, each with its file:line. Every
 * input here is also read by parsePostSlow, which must answer the same: the
 * js-yaml fast path may never change a meaning or a message
 * (front-matter-parity.test.ts holds it to that on generated inputs).
 */
import { describe, expect, test } from "vitest";
import type { Problem } from "../../src/errors.js";
import type { ParsedPost } from "../../src/model/snapshot.js";
import { parsePost, parsePostSlow } from "../../src/sources/front-matter.js";

const FILE = "acme/post.md";

/** parsePost's answer, after checking parsePostSlow gives exactly the same one. */
function parse(text: string): { post?: ParsedPost; problems: Problem[] } {
  const result = parsePost(FILE, text);
  expect(parsePostSlow(FILE, text)).toStrictEqual(result);
  return result;
}

function accepted(text: string): ParsedPost {
  const { post, problems } = parse(text);
  expect(problems).toEqual([]);
  return post!;
}

function refused(text: string): Problem[] {
  const { post, problems } = parse(text);
  expect(post).toBeUndefined();
  return problems;
}

/** Lines 2-7 hold the six required keys; `replace` swaps one (null drops it), `extra` follows from line 8. */
const REQUIRED = ["id: p1", "title: T", "slug: p1", "status: published", "publishedAt: 2026-01-05", "authorName: A"];
function doc(replace: Record<string, string | null> = {}, extra: string[] = [], body = "Body\n"): string {
  const lines = REQUIRED.flatMap((line) => {
    const key = line.slice(0, line.indexOf(":"));
    if (!(key in replace)) return [line];
    return replace[key] === null ? [] : [replace[key]!];
  });
  return ["---", ...lines, ...extra, "---", body].join("\n");
}

describe("a post written by hand", () => {
  // Saved by a Windows editor: a BOM, CRLF line ends, a comment, quoted and
  // unquoted values, a folded excerpt, a date-time with an offset.
  const lines = [
    "---",
    "# The spring menu post",
    "id: spring-menu-2026",
    'title: "Spring menu: what\'s new"',
    "slug: spring-menu",
    "status: published",
    "publishedAt: 2026-03-20T08:30:00+01:00",
    "authorName: 'Grace O''Brien'",
    "category: news",
    'tags: [menu, spring, "2026"]',
    "excerpt: >-",
    "  Three new drinks,",
    "  one old favourite.",
    "featuredImage:",
    "  url: /media/spring.jpg",
    "  alt: A cup on a sunny table",
    "seoMetadata:",
    "  title: Spring menu 2026",
    "references:",
    "  - source: Coffee Almanac",
    "    url: https://almanac.example/spring",
    "    asOf: 2025",
    "    claim: Cold brew sales double in spring",
    "---",
  ];
  const body = "## What's new\r\n\r\nOur **spring** menu [1].\r\n";
  const text = `\uFEFF${lines.join("\r\n")}\r\n${body}`;

  test("means exactly what it says: values, body, publish date and instant, and the file line of each key", () => {
    expect(accepted(text)).toStrictEqual({
      file: FILE,
      meta: {
        id: "spring-menu-2026",
        title: "Spring menu: what's new",
        slug: "spring-menu",
        status: "published",
        publishedAt: "2026-03-20T08:30:00+01:00",
        authorName: "Grace O'Brien",
        category: "news",
        tags: ["menu", "spring", "2026"],
        excerpt: "Three new drinks, one old favourite.",
        featuredImage: { url: "/media/spring.jpg", alt: "A cup on a sunny table" },
        seoMetadata: { title: "Spring menu 2026" },
        references: [
          {
            source: "Coffee Almanac",
            url: "https://almanac.example/spring",
            asOf: "2025",
            claim: "Cold brew sales double in spring",
          },
        ],
      },
      body,
      publish: { date: "2026-03-20", instant: Date.UTC(2026, 2, 20, 7, 30) },
      lines: {
        id: 3,
        title: 4,
        slug: 5,
        status: 6,
        publishedAt: 7,
        authorName: 8,
        category: 9,
        tags: 10,
        excerpt: 11,
        featuredImage: 14,
        seoMetadata: 17,
        references: 19,
      },
    });
  });

  test("the same post saved with LF and no BOM means the same, body line ends aside", () => {
    const unix = `${lines.join("\n")}\n${body.replaceAll("\r\n", "\n")}`;
    const { body: windowsBody, ...windows } = accepted(text);
    const { body: unixBody, ...rest } = accepted(unix);
    expect(rest).toStrictEqual(windows);
    expect(unixBody).toBe(windowsBody.replaceAll("\r\n", "\n"));
  });
});

describe("defaults", () => {
  test("only the six required keys: no optional member is filled in, the lines are 2-7", () => {
    const post = accepted(doc());
    expect(post.meta).toStrictEqual({
      id: "p1",
      title: "T",
      slug: "p1",
      status: "published",
      publishedAt: "2026-01-05",
      authorName: "A",
    });
    expect(post.lines).toStrictEqual({ id: 2, title: 3, slug: 4, status: 5, publishedAt: 6, authorName: 7 });
    expect(post.body).toBe("Body\n");
  });

  test("an empty excerpt counts as absent", () => {
    expect(accepted(doc({}, ['excerpt: ""'])).meta.excerpt).toBeUndefined();
    expect(accepted(doc({}, ["excerpt:  ''"])).meta.excerpt).toBeUndefined();
  });

  test("the body is everything after the closing line, exactly; a file ending at the closing line has an empty body", () => {
    expect(accepted(doc({}, [], "\n  indented\n---\nnot front matter\n")).body).toBe("\n  indented\n---\nnot front matter\n");
    expect(accepted(["---", ...REQUIRED, "---"].join("\n")).body).toBe("");
  });

  test("draft and archived are statuses like published, with the same rules", () => {
    expect(accepted(doc({ status: "status: draft" })).meta.status).toBe("draft");
    expect(accepted(doc({ status: "status: 'archived'" })).meta.status).toBe("archived");
  });
});

describe("quoted and unquoted values", () => {
  test("a value that YAML reads as a number, a boolean or null is refused where text is expected, at its line, saying to quote it", () => {
    expect(refused(doc({ title: "title: 2024" }))).toEqual([
      { where: `${FILE}:3`, message: 'title: must be text, but YAML reads 2024 as a number; quote it: title: "2024"' },
    ]);
    expect(refused(doc({ authorName: "authorName: true" }))).toEqual([
      { where: `${FILE}:7`, message: 'authorName: must be text, but YAML reads true as a yes/no value; quote it: authorName: "true"' },
    ]);
    expect(refused(doc({ title: "title: null" }))).toEqual([
      { where: `${FILE}:3`, message: 'title: must be text, but YAML reads null as no value; quote it: title: "null"' },
    ]);
    expect(refused(doc({}, ["tags: [menu, 2026]"]))).toEqual([
      { where: `${FILE}:8`, message: 'tags.1: must be text, but YAML reads 2026 as a number; quote it: "2026"' },
    ]);
    expect(refused(doc({ title: "title:" }))).toEqual([{ where: `${FILE}:3`, message: "title: is empty" }]);
  });

  test("quoted, the same values are text; yes, no and on are text unquoted (YAML 1.2)", () => {
    expect(accepted(doc({ title: 'title: "2024"' })).meta.title).toBe("2024");
    expect(accepted(doc({ authorName: "authorName: 'true'" })).meta.authorName).toBe("true");
    expect(accepted(doc({ title: "title: yes" }, ["tags: [no, on, off]"])).meta).toMatchObject({ title: "yes", tags: ["no", "on", "off"] });
  });

  test("a year given as a number in a reference's asOf is the text of that year", () => {
    const refs = (asOf: string) => doc({}, ["references:", "  - source: S", "    url: https://s.example/", `    asOf: ${asOf}`]);
    expect(accepted(refs("2024")).meta.references).toEqual([{ source: "S", url: "https://s.example/", asOf: "2024" }]);
    expect(accepted(refs('"2024"')).meta.references).toEqual([{ source: "S", url: "https://s.example/", asOf: "2024" }]);
    expect(refused(refs("24"))).toEqual([{ where: `${FILE}:11`, message: "references.0.asOf: must be a year (YYYY)" }]);
  });
});

describe("YAML mistakes: each said once, at the line to change, with the change to make", () => {
  test("an unquoted ': ' in a value, however many", () => {
    expect(refused(doc({ title: "title: Note: a colon" }))).toEqual([
      { where: `${FILE}:3`, message: `front matter: a value containing ': ' must be quoted: title: "Note: a colon"` },
    ]);
    expect(refused(doc({ title: "title: Recipe: Note: two colons" }))).toEqual([
      { where: `${FILE}:3`, message: `front matter: a value containing ': ' must be quoted: title: "Recipe: Note: two colons"` },
    ]);
    expect(refused(doc({ title: "title: Note:" }))).toEqual([
      { where: `${FILE}:3`, message: `front matter: a value ending in ':' must be quoted: title: "Note:"` },
    ]);
    // Each line with its own mistake is its own problem; inside a list item too.
    expect(refused(doc({ title: "title: A: b" }, ["references:", '  - source: "Said: this"', "    url: https://s.example/", "  - source: Said: that"]))).toEqual([
      { where: `${FILE}:3`, message: `front matter: a value containing ': ' must be quoted: title: "A: b"` },
      { where: `${FILE}:11`, message: `front matter: a value containing ': ' must be quoted: source: "Said: that"` },
    ]);
  });

  test("a value holding a double quote is suggested in single quotes", () => {
    expect(refused(doc({ title: 'title: The "best": ever' }))).toEqual([
      { where: `${FILE}:3`, message: `front matter: a value containing ': ' must be quoted: title: 'The "best": ever'` },
    ]);
  });

  test("tab indents: one problem at the first such line, naming the others, and nothing about keys", () => {
    const tabbed = doc({}, ["references:", "\t- source: A", "\t  url: https://a.example/", "\t- source: B", "\t  url: https://b.example/"]);
    expect(refused(tabbed)).toEqual([
      { where: `${FILE}:9`, message: "front matter: this line is indented with a tab (so are lines 10, 11, 12); indent with spaces, not tabs" },
    ]);
    expect(refused(doc({}, ["featuredImage:", "\turl: /a.jpg", "  alt: A"]))).toEqual([
      { where: `${FILE}:9`, message: "front matter: this line is indented with a tab; indent with spaces, not tabs" },
    ]);
  });

  test("an unclosed [ or { is reported at its own line, not where the front matter ends", () => {
    expect(refused(doc({ slug: "slug: p1" }, ["tags: [a, b", "category: news"]))).toEqual([
      { where: `${FILE}:8`, message: "front matter: the '[' on line 8 is never closed; end the list with ']' on the same line: tags: [a, b]" },
    ]);
    expect(refused(doc({}, ["tags: [a, b"]))).toEqual([
      { where: `${FILE}:8`, message: "front matter: the '[' on line 8 is never closed; end the list with ']' on the same line: tags: [a, b]" },
    ]);
    expect(refused(doc({}, ["featuredImage: {url: /a.jpg, alt: A", "category: news"]))).toEqual([
      {
        where: `${FILE}:8`,
        message: "front matter: the '{' on line 8 is never closed; end the mapping with '}' on the same line: featuredImage: {url: /a.jpg, alt: A}",
      },
    ]);
  });

  test("thousands of unclosed brackets: one problem at their line, no stack overflow", () => {
    const problems = refused(doc({}, [`excerpt: ${"[".repeat(5_000)}`]));
    expect(problems).toEqual([{ where: `${FILE}:8`, message: expect.stringMatching(/^front matter: lists and mappings nest more than 64 levels deep here/) }]);
  });

  test("sixty unclosed brackets, within the nesting bound: the suggested line cut short", () => {
    const problems = refused(doc({}, [`excerpt: ${"[".repeat(60)}${"x".repeat(200)}`]));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.where).toBe(`${FILE}:8`);
    expect(problems[0]!.message).toMatch(/^front matter: the '\[' on line 8 is never closed; end the list with '\]' on the same line: excerpt: \[+x+…$/);
    expect(problems[0]!.message.length).toBeLessThan(300);
  });

  test("an unclosed quote is reported at its own line", () => {
    expect(refused(doc({ title: 'title: "Spring menu' }))).toEqual([
      { where: `${FILE}:3`, message: `front matter: the quote " on line 3 is never closed; close it on the same line: title: "Spring menu"` },
    ]);
    expect(refused(doc({ authorName: "authorName: 'Ada" }))).toEqual([
      { where: `${FILE}:7`, message: "front matter: the quote ' on line 7 is never closed; close it on the same line: authorName: 'Ada'" },
    ]);
  });

  test("a problem before an unclosed bracket is still reported; what follows it is not", () => {
    expect(refused(doc({ title: "title: A: b" }, ["tags: [a, b", "excerpt: C: d"]))).toEqual([
      { where: `${FILE}:3`, message: `front matter: a value containing ': ' must be quoted: title: "A: b"` },
      { where: `${FILE}:8`, message: "front matter: the '[' on line 8 is never closed; end the list with ']' on the same line: tags: [a, b]" },
    ]);
  });

  test("a key indented under a key that has a value, a reserved first character, text after a quoted value, a repeated key", () => {
    expect(refused(doc({ slug: null }, ["  slug: p1"]))).toEqual([
      {
        where: `${FILE}:7`,
        message: "front matter: this line is indented under authorName (line 6), which already has a value; indent it like the keys around it",
      },
    ]);
    expect(refused(doc({ authorName: "authorName: @ada" }))).toEqual([
      { where: `${FILE}:7`, message: `front matter: a value starting with '@' must be quoted: authorName: "@ada"` },
    ]);
    expect(refused(doc({ title: 'title: "Spring" menu' }))).toEqual([
      {
        where: `${FILE}:3`,
        message:
          "front matter: text follows the end of the value (a value that opens with a quote or a bracket ends where it closes); " +
          `quote the whole value: title: '"Spring" menu'`,
      },
    ]);
    expect(refused(doc({}, ["title: Again"]))).toEqual([
      { where: `${FILE}:8`, message: "front matter: the key title is given more than once; keep one" },
    ]);
  });
});

describe("publishedAt", () => {
  const at = (value: string) => accepted(doc({ publishedAt: `publishedAt: ${value}` })).publish;

  test("a date alone is 00:00 UTC of that date; a date-time without an offset is UTC", () => {
    expect(at("2026-01-05")).toEqual({ date: "2026-01-05", instant: Date.UTC(2026, 0, 5) });
    expect(at("'2026-01-05'")).toEqual({ date: "2026-01-05", instant: Date.UTC(2026, 0, 5) });
    expect(at("2026-01-05T10:00:00")).toEqual({ date: "2026-01-05", instant: Date.UTC(2026, 0, 5, 10) });
    expect(at("2026-01-05T10:00")).toEqual({ date: "2026-01-05", instant: Date.UTC(2026, 0, 5, 10) });
    expect(at("2026-01-05T10:00:00.250Z")).toEqual({ date: "2026-01-05", instant: Date.UTC(2026, 0, 5, 10, 0, 0, 250) });
  });

  test("an offset moves the instant, never the date as written", () => {
    expect(at("2026-01-05T00:30:00+02:00")).toEqual({ date: "2026-01-05", instant: Date.UTC(2026, 0, 4, 22, 30) });
    expect(at("2026-01-05T23:30:00-05:00")).toEqual({ date: "2026-01-05", instant: Date.UTC(2026, 0, 6, 4, 30) });
  });

  test("29 February exists in leap years only", () => {
    expect(at("2024-02-29").instant).toBe(Date.UTC(2024, 1, 29));
    expect(refused(doc({ publishedAt: "publishedAt: 2026-02-29" }))).toEqual([
      { where: `${FILE}:6`, message: "publishedAt: must be an existing date, YYYY-MM-DD or an ISO 8601 date-time" },
    ]);
  });

  test.each(["2026-1-5", "05/01/2026", "2026-01-05 10:00", "2026-01-05T24:00:00Z", "2026-13-01", "2026-01-05T10:00:00+25:00", "tomorrow"])(
    "%s is refused at its line",
    (value) => {
      expect(refused(doc({ publishedAt: `publishedAt: ${value}` }))).toEqual([
        { where: `${FILE}:6`, message: "publishedAt: must be an existing date, YYYY-MM-DD or an ISO 8601 date-time" },
      ]);
    },
  );
});

describe("validation problems name the file and line", () => {
  test("a missing required key is reported at the opening of the front matter", () => {
    expect(refused(doc({ title: null }))).toEqual([{ where: `${FILE}:2`, message: "title: is required" }]);
    expect(refused(doc({ authorName: null }))).toEqual([{ where: `${FILE}:2`, message: "authorName: is required" }]);
    // An enum's issue is not invalid_type, but an absent status is just as missing.
    expect(refused(doc({ status: null }))).toEqual([{ where: `${FILE}:2`, message: "status: is required" }]);
  });

  test("an unknown key is reported at its own line, nested ones with their path", () => {
    expect(refused(doc({}, ["author: Bob"]))).toEqual([{ where: `${FILE}:8`, message: "author: unknown key" }]);
    expect(refused(doc({}, ["featuredImage:", "  url: /a.jpg", "  alt: A", "  caption: C"]))).toEqual([
      { where: `${FILE}:11`, message: "featuredImage.caption: unknown key" },
    ]);
  });

  test("ids, slugs and statuses that break the rules, each at its line", () => {
    expect(refused(doc({ id: "id: by-slug" }))).toEqual([
      { where: `${FILE}:2`, message: 'id: "by-slug" is reserved and cannot be used as an id' },
    ]);
    expect(refused(doc({ id: "id: -p1" }))).toEqual([
      { where: `${FILE}:2`, message: "id: must be 1-128 characters of A-Z a-z 0-9 _ -, starting with a letter or digit" },
    ]);
    expect(refused(doc({ slug: "slug: Hello_World" }))).toEqual([
      { where: `${FILE}:4`, message: "slug: must be lowercase a-z 0-9 words joined by single '-'" },
    ]);
    expect(refused(doc({ status: "status: live" }))).toEqual([
      { where: `${FILE}:5`, message: 'status: must be one of draft, published, archived, not "live"' },
    ]);
  });

  test("links and media: absolute http(s) for references, http(s) or a site path for images", () => {
    const problems = refused(
      doc({}, [
        "featuredImage: { url: //evil.example/x.jpg, alt: A }",
        "references:",
        "  - source: S",
        "    url: javascript:alert(1)",
        "  - source: ''",
        "    url: /relative",
      ]),
    );
    expect(problems).toEqual([
      { where: `${FILE}:8`, message: "featuredImage.url: must be an absolute http(s) URL or a path starting with '/'" },
      { where: `${FILE}:11`, message: "references.0.url: must be an absolute http: or https: URL" },
      { where: `${FILE}:12`, message: "references.1.source: must not be empty" },
      { where: `${FILE}:13`, message: "references.1.url: must be an absolute http: or https: URL" },
    ]);
  });

  test("every problem of a file is reported at once, not just the first", () => {
    const text = ["---", "id: by-slug", "title: ''", "slug: Bad", "status: live", "publishedAt: tomorrow", "tags: [a, '']", "---", ""].join("\n");
    expect(refused(text)).toEqual([
      { where: `${FILE}:2`, message: 'id: "by-slug" is reserved and cannot be used as an id' },
      { where: `${FILE}:3`, message: "title: must not be empty" },
      { where: `${FILE}:4`, message: "slug: must be lowercase a-z 0-9 words joined by single '-'" },
      { where: `${FILE}:5`, message: 'status: must be one of draft, published, archived, not "live"' },
      { where: `${FILE}:6`, message: "publishedAt: must be an existing date, YYYY-MM-DD or an ISO 8601 date-time" },
      { where: `${FILE}:2`, message: "authorName: is required" },
      { where: `${FILE}:7`, message: "tags.1: must not be empty" },
    ]);
  });

  test("lines count from the top of the file, BOM and CRLF or not", () => {
    const text = `\uFEFF${doc({}, ["", "# a comment", "author: Bob"]).replaceAll("\n", "\r\n")}`;
    expect(refused(text)).toEqual([{ where: `${FILE}:10`, message: "author: unknown key" }]);
  });
});
