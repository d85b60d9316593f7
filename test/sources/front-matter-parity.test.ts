/**
 * The js-yaml fast path of parsePost must never change an answer: for any
 * text, parsePost returns exactly what parsePostSlow (yaml alone, today's
 * reader) returns, the post with its values and key lines, or the problems
 * with their messages and lines. Valid front matter in the usual styles must
 * take the fast path, or it is not worth having.
 */
import fc from "fast-check";
import { describe, expect, test, vi } from "vitest";
import { Schema } from "yaml";
import { MAY_BE_TYPED, parsePost, parsePostSlow } from "../../src/sources/front-matter.js";

// Counts yaml parses, to tell which path parsePost took (vi.mock is hoisted above the imports).
const yamlParses = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/sources/yaml-lib.js", async (importOriginal) => {
  const { yamlLib } = await importOriginal<typeof import("../../src/sources/yaml-lib.js")>();
  const yaml = yamlLib();
  const parseDocument = ((...args: Parameters<typeof yaml.parseDocument>) => {
    yamlParses.count++;
    return yaml.parseDocument(...args);
  }) as typeof yaml.parseDocument;
  const counted = { ...yaml, parseDocument };
  return { yamlLib: () => counted };
});

const FILE = "acme/post.md";

/** parsePost's answer, whether it took the fast path, and the check that it matches the slow path. */
function parity(text: string): { fast: boolean; accepted: boolean } {
  const before = yamlParses.count;
  const result = parsePost(FILE, text);
  const fast = yamlParses.count === before;
  expect(result).toStrictEqual(parsePostSlow(FILE, text));
  return { fast, accepted: result.post !== undefined };
}

// ---------------------------------------------------------------------------
// Valid front matter, from the fields of src/model/sources.ts, in varied styles.

class Raw {
  constructor(readonly text: string) {}
}
type Scalar = string | number | Raw;
type Value = Scalar | Value[] | { [key: string]: Value };

const UNICODE = ["café", "naïve", "日本語", "Ελληνικά", "emoji😀", "Zoë", "ﬁx", "a\u00a0b", "zero\u200bwidth", "עברית"];
const PUNCTUATION = ["a:b", "C#", "x,y", "[1]", "{k}", "it's", 'say "hi"', "50%", "a & b", "*star", "-dash", "?q"];
const MORE_PUNCTUATION = ["!bang", "@at", "`tick`", "|pipe", ">gt", "back\\slash", "x: y", "x #y", "end:", "#hash", "<<", "="];
// Plain scalars yaml's core schema and js-yaml's read differently, or that look typed but are strings.
const TRICKY = [
  ...["yes", "no", "on", "off", "=", "1_000", "0b101", "+.5", "-.5e3", "1e999", "9".repeat(400), "-0", "0123"],
  ...["0o7", "-0o7", "0x1F", "+0x1F", ".inf", "-.Inf", ".NaN", "Null", "NULL", "~", "TRUE", "tRUE", "0X1F"],
  ...["1.", "1.e3", ".5", "2024-01-05", "12:30:00", "null", "true", "False", "+12"],
];
const YEARS = ["0x7E8", "0o3750", "+2024", "2024.0", "2.024e3", "0b11111101000", "+0x7E8", "02024", "2024e0", "1e999"];

const word = fc.stringMatching(/^[A-Za-z][a-z]{0,9}$/);
const sentence = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: word },
      { weight: 2, arbitrary: fc.constantFrom(...UNICODE) },
      { weight: 2, arbitrary: fc.constantFrom(...PUNCTUATION, ...MORE_PUNCTUATION) },
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((words) => words.join(" "));
const text = fc.oneof(
  { weight: 20, arbitrary: sentence },
  { weight: 4, arbitrary: fc.array(sentence, { minLength: 2, maxLength: 4 }).map((lines) => lines.join("\n")) },
  { weight: 2, arbitrary: fc.array(sentence, { minLength: 2, maxLength: 3 }).map((lines) => lines.join("\n\n")) },
  { weight: 1, arbitrary: fc.constantFrom(...TRICKY).map((t) => new Raw(t)) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }) },
);
const slug = fc
  .array(fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.join("-"));
const id = fc.oneof(
  { weight: 9, arbitrary: fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,24}$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9][A-Za-z0-9_-]{0,24}$/) },
);
const date = fc
  .date({ min: new Date("1990-01-01"), max: new Date("2099-12-31"), noInvalidDate: true })
  .chain((d) => fc.constantFrom(d.toISOString().slice(0, 10), d.toISOString(), d.toISOString().replace("Z", "+02:00")));
const url = fc.tuple(slug, slug).map(([host, path]) => `https://${host}.example.org/${path}`);
const mediaUrl = fc.oneof(url, slug.map((s) => `/media/${s}.jpg`));
const year = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1900, max: 2099 }) },
  { weight: 4, arbitrary: fc.integer({ min: 1900, max: 2099 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom(...YEARS).map((y) => new Raw(y)) },
);

const frontMatter: fc.Arbitrary<Record<string, Value>> = fc.record(
  {
    id,
    title: text,
    slug,
    status: fc.constantFrom("draft", "published", "archived"),
    publishedAt: date,
    authorName: text,
    excerpt: fc.oneof(text, fc.constant("")),
    category: slug,
    tags: fc.array(fc.oneof(word, fc.constantFrom(...UNICODE, ...PUNCTUATION)), { maxLength: 4 }),
    featuredImage: fc.record({ url: mediaUrl, alt: fc.oneof(text, fc.constant("")) }),
    seoMetadata: fc.record({ title: text, description: text }, { requiredKeys: [] }),
    references: fc.array(
      fc.record({ source: sentence, url, asOf: year, claim: text }, { requiredKeys: ["source", "url"] }),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: ["id", "title", "slug", "status", "publishedAt", "authorName"] },
);

/** A small seeded generator for style choices, so one integer replays a rendering. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (n: number) => Math.floor(next() * n),
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!,
  };
}
type Random = ReturnType<typeof random>;

// What the fast path leaves to yaml; the renderer escapes these in double quotes.
const UNSAFE = /[\x00-\x1F\x7F-\x9F\u2028\u2029\uFEFF\uFFFE\uFFFF]/;
const pad = (n: number) => " ".repeat(n);

function plainOk(s: string, flow: boolean): boolean {
  return (
    /^[^\s\-?:,[\]{}#&*!|>'"%@`]/.test(s) &&
    !UNSAFE.test(s) &&
    s === s.trim() &&
    !s.includes(": ") &&
    !s.includes(" #") &&
    !s.endsWith(":") &&
    !(flow && /[,[\]{}:]/.test(s))
  );
}

function doubleQuoted(s: string, r: Random): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (ch === "/" && r.chance(0.3)) out += "\\/";
    else if (UNSAFE.test(ch) || (code > 0x7f && code <= 0xffff && r.chance(0.2))) {
      const hex = code.toString(16).padStart(4, "0");
      out += `\\u${r.chance(0.5) ? hex.toUpperCase() : hex}`;
    } else out += ch;
  }
  return `${out}"`;
}

// Keys whose text may be written as a block scalar, which adds a line break to most values.
const FREE_TEXT = new Set(["title", "authorName", "excerpt", "alt", "description", "claim"]);

/** The first line's text after `key: ` or `- `, then any further whole lines (a block scalar's). */
function scalar(value: Scalar, parent: number, block: boolean, r: Random): [string, ...string[]] {
  const flow = !block;
  if (typeof value === "number") return [String(value)];
  if (value instanceof Raw) return [value.text];
  const styles: string[] = ["double"];
  if (plainOk(value, flow)) styles.push("plain", "plain", "plain");
  if (!value.includes("\n") && !UNSAFE.test(value)) styles.push("single");
  const lines = value.split("\n");
  if (block && !UNSAFE.test(value) && lines[0] !== "" && lines.every((l) => !l.startsWith(" "))) styles.push("block");
  switch (r.pick(styles)) {
    case "plain":
      return [value];
    case "single":
      return [`'${value.replaceAll("'", "''")}'`];
    case "block": {
      const indent = parent + 1 + r.int(3);
      const header = r.pick(["|", ">"]) + r.pick(["", "-", "+"]) + (r.chance(0.1) ? " # block" : "");
      return [header, ...lines.map((l) => (l === "" ? "" : pad(indent) + l))];
    }
    default:
      return [doubleQuoted(value, r)];
  }
}

const isMap = (v: Value): v is { [key: string]: Value } =>
  typeof v === "object" && !(v instanceof Raw) && !Array.isArray(v);
const isScalar = (v: Value): v is Scalar => !isMap(v) && !Array.isArray(v);

class Renderer {
  readonly lines: string[] = [];
  /** After a block scalar, a line of spaces would belong to it: blank lines stay empty until the next entry. */
  private afterBlock = false;

  constructor(private readonly r: Random) {}

  private key(name: string): string {
    return this.r.chance(0.1) ? `"${name}"` : this.r.chance(0.05) ? `'${name}'` : name;
  }

  private trailing(): string {
    return this.r.chance(0.1) ? ` # ${this.r.pick(["note", "café: x", "#", "- a", "'q"])}` : "";
  }

  /** Blank and comment lines between entries, at indents that cannot belong to the entry before. */
  gap(indent: number): void {
    while (this.r.chance(0.15)) {
      if (this.r.chance(0.5)) {
        this.lines.push(this.afterBlock || this.r.chance(0.5) ? "" : pad(1 + this.r.int(4)));
      } else {
        const at = this.afterBlock ? this.r.int(indent + 1) : this.r.int(indent + 5);
        const comment = this.r.pick(["comment", "a: b", "- x", "日本"]);
        this.lines.push(`${pad(at)}#${this.r.chance(0.8) ? " " : ""}${comment}`);
      }
    }
  }

  private push(first: string, rest: readonly string[]): void {
    this.lines.push(first, ...rest);
    this.afterBlock = rest.length > 0;
  }

  map(entries: [string, Value][], indent: number, firstPrefix?: string): void {
    entries.forEach(([name, value], i) => {
      const prefix = i === 0 && firstPrefix !== undefined ? firstPrefix : pad(indent);
      if (i > 0 || firstPrefix === undefined) this.gap(indent);
      this.entry(prefix + this.key(name), value, indent, FREE_TEXT.has(name));
    });
  }

  private entry(head: string, value: Value, indent: number, block: boolean): void {
    const r = this.r;
    if (isScalar(value)) {
      const [first, ...rest] = scalar(value, indent, block, r);
      this.push(`${head}: ${first}${rest.length === 0 ? this.trailing() : ""}`, rest);
    } else if (Array.isArray(value)) {
      if (value.length === 0 || (value.every(isScalar) && r.chance(0.4))) {
        const items = value.map((v) => scalar(v as Scalar, indent, false, r)[0]);
        this.push(`${head}: [${items.join(r.pick([", ", ",", " , "]))}]${this.trailing()}`, []);
        return;
      }
      this.push(`${head}:${this.trailing()}`, []);
      const at = r.chance(0.3) ? indent : indent + 1 + r.int(3);
      for (const item of value) this.item(item, at);
    } else {
      const entries = Object.entries(value);
      if (entries.length === 0 || (entries.every(([, v]) => isScalar(v)) && r.chance(0.3))) {
        const pairs = entries.map(([k, v]) => `${this.key(k)}: ${scalar(v as Scalar, indent, false, r)[0]}`);
        this.push(`${head}: {${r.pick(["", " "])}${pairs.join(", ")}${r.pick(["", " "])}}${this.trailing()}`, []);
        return;
      }
      this.push(`${head}:${this.trailing()}`, []);
      this.map(entries, indent + 1 + r.int(3));
    }
  }

  private item(value: Value, indent: number): void {
    this.gap(indent);
    const dash = `${pad(indent)}-${pad(1 + this.r.int(3))}`;
    if (isMap(value) && Object.keys(value).length > 0) {
      this.map(Object.entries(value), dash.length, dash);
    } else if (isScalar(value)) {
      const [first, ...rest] = scalar(value, indent, true, this.r);
      this.push(`${dash}${first}${rest.length === 0 ? this.trailing() : ""}`, rest);
    } else {
      throw new Error("the model has no other sequence items");
    }
  }
}

const post = fc.tuple(frontMatter, fc.integer()).map(([fm, seed]) => {
  const r = random(seed);
  const entries = Object.entries(fm);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  const renderer = new Renderer(r);
  renderer.gap(0);
  renderer.map(entries, 0);
  renderer.gap(0);
  const nl = r.chance(0.3) ? "\r\n" : "\n";
  const open = r.chance(0.1) ? "---  " : "---";
  const body = r.pick(["Body text.\n", "", "# Heading\n\n---\n\nAfter a break.\n", "Line one\nline two"]);
  return `${r.chance(0.1) ? "\uFEFF" : ""}${open}${nl}${renderer.lines.map((l) => l + nl).join("")}---${nl}${body}`;
});

// ---------------------------------------------------------------------------
// Mutations: small edits that break, or nearly break, a valid document.

const SNIPPETS = [
  ...["\t", ":", ": ", " #", "#", "&a ", "*a", "!!str ", "!!int ", "!!binary ", "!x ", "<<: ", "- ", "? ", "%YAML 1.2\n"],
  ...["---\n", "...\n", "{", "}", "[", "]", ",", "'", '"', "\\", "|", ">", "|2", "\r", "\n", "\r\n", " ", "   "],
  ...["\u00a0", "\u2028", "\uFEFF", "\u0085", "\0", "\u0001", "😀", "0x", "+.5", "1e999", "0b1", "-", "@", "`", "~"],
  ...["null", "\\u", "\\x41", "\\ud83d", "a:", "x: y\n", "  x: y\n", "- x\n", "title: dup\n", "&a [1]\n", "*a\n"],
  ...["!!js/function 'f'", "#c", `${"k".repeat(1030)}: v\n`, "__proto__: x\n", '"title": X\n', "? title\n: T\n"],
];
const VALUES = [
  ...TRICKY,
  ...["&a x", "*a", "!!str 1", "!!int '5'", "[a, [b]]", "{a: {b: c}}", "|2\n   x", '"multi\n line"', "'multi\n line'"],
  ...["[a,\n b]", "a\n  b", "{ url: /x.jpg,\n  alt: y }", "|\n  a\n b", ">\n\n  x", "|\n   \n  x", "[a, b,]", "{a, b}"],
  ...["[a: b]", "- x", "x:y", "'a'b", '"a"#c', '"\\ud800"', '"\\U0001F600"', '"\\x41\\N\\_"', '"a\\\n  b"', "", "#x"],
];
interface Edit {
  kind: "insert" | "delete" | "duplicate" | "indent" | "value" | "swap";
  at: number;
  size: number;
  snippet: string;
  value: string;
}
const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom("insert", "delete", "duplicate", "indent", "value", "swap"),
  at: fc.nat(),
  size: fc.integer({ min: 1, max: 6 }),
  snippet: fc.constantFrom(...SNIPPETS),
  value: fc.constantFrom(...VALUES),
});

function mutate(doc: string, edits: readonly Edit[]): string {
  let out = doc;
  for (const e of edits) {
    const lines = out.split("\n");
    const line = e.at % lines.length;
    switch (e.kind) {
      case "insert": {
        const at = e.at % (out.length + 1);
        out = out.slice(0, at) + e.snippet + out.slice(at);
        break;
      }
      case "delete": {
        const at = e.at % (out.length + 1);
        out = out.slice(0, at) + out.slice(at + e.size);
        break;
      }
      case "duplicate":
        lines.splice(line, 0, lines[line]!);
        out = lines.join("\n");
        break;
      case "indent":
        lines[line] = e.size > 3 ? lines[line]!.replace(/^ {1,2}/, "") : pad(e.size) + lines[line];
        out = lines.join("\n");
        break;
      case "value": {
        const colon = lines[line]!.indexOf(": ");
        lines[line] = colon < 0 ? `${lines[line]}${e.value}` : `${lines[line]!.slice(0, colon + 2)}${e.value}`;
        out = lines.join("\n");
        break;
      }
      case "swap": {
        const other = (line + e.size) % lines.length;
        [lines[line], lines[other]] = [lines[other]!, lines[line]!];
        out = lines.join("\n");
        break;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------

describe("parsePost with its js-yaml fast path answers exactly as yaml alone", () => {
  test("generated valid front matter: same post, lines included, and it takes the fast path", () => {
    let accepted = 0;
    fc.assert(
      fc.property(post, (text) => {
        const { fast, accepted: ok } = parity(text);
        if (!ok) return;
        // Valid posts the fast path may not read are the cost this change exists to remove.
        expect(fast, "a valid post took the slow path").toBe(true);
        accepted++;
      }),
      { numRuns: 3000 },
    );
    // Most generated posts are valid; the rest check that invalid values get yaml's messages.
    expect(accepted).toBeGreaterThan(1500);
  }, 120_000);

  test("mutated and broken front matter: same post or same problems", () => {
    let fastAccepted = 0;
    fc.assert(
      fc.property(post, fc.array(edit, { minLength: 1, maxLength: 3 }), (text, edits) => {
        const { fast, accepted } = parity(mutate(text, edits));
        if (fast && accepted) fastAccepted++;
      }),
      { numRuns: 5000 },
    );
    // About one in six edits leaves a valid post (a moved comment, a changed value): those compare two readings.
    expect(fastAccepted).toBeGreaterThan(400);
  }, 120_000);

  test("a fast-path post's key lines are the file lines of its top-level keys", () => {
    const lines = ["---", "# about", "", '"id": p1', "title: |", "  T", "", "'slug': p1", "status: published"];
    lines.push("publishedAt: 2026-01-05", "authorName: A", "references:", "- source: S", "  url: https://x.org/");
    const text = `\uFEFF${[...lines, "---", "Body"].join("\r\n")}`;
    expect(parity(text).fast).toBe(true);
    expect(parsePost(FILE, text).post?.lines).toEqual({
      id: 4,
      title: 5,
      slug: 8,
      status: 9,
      publishedAt: 10,
      authorName: 11,
      references: 12,
    });
  });

  const REQUIRED = ["id: p1", "title: T", "slug: p1", "status: published", "publishedAt: 2026-01-05", "authorName: A"];
  const doc = (...extra: string[]) => ["---", ...REQUIRED, ...extra, "---", "Body"].join("\n");
  const asOf = (value: string) => doc("references:", "  - source: S", "    url: https://x.org/", `    asOf: ${value}`);

  // Each case is one the two readers could disagree on; the path is the one it must take.
  test.each([
    ["a valid post", doc("tags: [a, 'b', \"c\"]", "# done"), "fast"],
    ["quoted top-level keys", ["---", '"id": p1', "'title': T", ...REQUIRED.slice(2), "---", ""].join("\n"), "fast"],
    ["asOf in binary, an int to js-yaml's core schema only", asOf("0b11111101000"), "slow"],
    ["asOf as signed hex, an int to js-yaml's core schema only", asOf("+0x7E8"), "slow"],
    ["asOf in octal, an int to both", asOf("0o3750"), "fast"],
    ["a binary-looking excerpt, a string to yaml", doc("excerpt: 0b101"), "fast"],
    ["an excerpt +.5, a float to yaml only", doc("excerpt: +.5"), "slow"],
    ["an excerpt 1e999, Infinity to yaml only", doc("excerpt: 1e999"), "slow"],
    ["a 400-digit number", doc(`excerpt: ${"9".repeat(400)}`), "slow"],
    ["yes is a string to both", doc("excerpt: yes"), "fast"],
    ["a null key, '' to yaml and 'null' to js-yaml", doc("null: x"), "slow"],
    ["a duplicate key", doc("title: Again"), "slow"],
    ["a duplicate key spelled quoted", doc('"title": Again'), "slow"],
    [
      "a '#' not after a space is text",
      doc("excerpt: x #comment", "seoMetadata:", "  title: C#", "  description: a#b"),
      "fast",
    ],
    [
      "a plain scalar may start with '-', '?' or ':'",
      doc("excerpt: -0o7", "seoMetadata: {title: ?x, description: :y}"),
      "fast",
    ],
    ["a comment glued to a quote", doc("excerpt: 'x'#no"), "slow"],
    ["a tab before a value", doc("excerpt:\tx"), "slow"],
    ["a tab as indentation", doc("featuredImage:", "\turl: /x.jpg", "\talt: y"), "slow"],
    ["a key over 1024 characters", doc(`${"k".repeat(1030)}: v`), "slow"],
    ["a multi-line flow sequence", doc("tags: [a,", "  b]"), "slow"],
    ["a flow sequence's closing bracket at the key's indent", doc("tags: [a,", "b]"), "slow"],
    ["a flow sequence with a trailing comma", doc("tags: [a, b,]"), "slow"],
    ["a multi-line plain scalar", doc("excerpt: one", "  two"), "slow"],
    ["an alias", doc("excerpt: &a x", "category: *a"), "slow"],
    ["a merge key", doc("featuredImage:", "  <<: {url: /x.jpg}", "  alt: y"), "slow"],
    ["a tag", doc("excerpt: !!str 5"), "slow"],
    ["a __proto__ key", doc("__proto__: {id: x}"), "slow"],
    ["a block scalar with a less indented line", doc("excerpt: |", "    a", "  b"), "slow"],
    ["a block scalar with more indented leading blank lines", doc("excerpt: |", "     ", "  a"), "slow"],
    [
      "a block scalar, kept trailing blank lines",
      ["---", ...REQUIRED, "excerpt: |+", "  a", "", "", "---", ""].join("\n"),
      "fast",
    ],
    ["CRLF line ends and a BOM", `\uFEFF${doc("excerpt: >-", "  folded", "  text").replaceAll("\n", "\r\n")}`, "fast"],
    ["a lone CR", doc("excerpt: a\rb"), "slow"],
    ["a sequence at its key's indent", doc("tags:", "- a", "- b"), "fast"],
    [
      "a compact mapping in a sequence",
      doc("references:", "-   source: S", "    url: https://x.org/", "    claim: |", "      c"),
      "fast",
    ],
    ["a document end marker", doc("...", "excerpt: x"), "slow"],
    ["no front matter keys", "---\n# nothing\n---\nBody", "slow"],
  ])("%s", (_name, text, path) => {
    const { fast } = parity(text);
    expect(fast ? "fast" : "slow").toBe(path);
  });
});

describe("the fast path's test for a plain scalar that may not be a string", () => {
  // What a core tag of yaml may read as null, a boolean or a number: MAY_BE_TYPED must let each through.
  const coreTests = new Schema({ schema: "core" }).tags.flatMap((tag) => (tag.default === true && "test" in tag && tag.test instanceof RegExp ? [tag.test] : []));
  const typed = (text: string) => coreTests.some((test) => test.test(text));
  const scalarLike = fc.stringMatching(/^[-+.~0-9a-zA-Z_:]{0,12}$/);

  test("matches every scalar a core tag matches, tricky ones and generated ones", () => {
    expect(coreTests.length).toBeGreaterThanOrEqual(8);
    for (const text of [...TRICKY, ...YEARS, ...SNIPPETS, ...VALUES]) if (typed(text)) expect(MAY_BE_TYPED.test(text), text).toBe(true);
    fc.assert(fc.property(fc.oneof(scalarLike, fc.string()), (text) => !typed(text) || MAY_BE_TYPED.test(text)), { numRuns: 20_000 });
  });

  test("lets a date, a slug or a word through as a string, without yaml", () => {
    for (const text of ["2026-01-10", "2026-01-10T08:00:00Z", "post-088106", "published", "news", "nullable", "trueish", "1.2.3-beta"]) {
      expect(typed(text), text).toBe(false);
      expect(MAY_BE_TYPED.test(text), text).toBe(false);
    }
  });
});
