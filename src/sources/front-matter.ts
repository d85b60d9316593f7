/**
 * Splits a post into YAML front matter and markdown body, and validates the
 * front matter. The YAML is read with the core schema only: no custom tags, no
 * `!!js` anything, no merge keys, duplicate keys refused, aliases bounded, and
 * every warning is an error, so a file means exactly what it says.
 *
 * Two readers, one meaning. `yaml` is the reference: it reports every problem
 * with its line. js-yaml reads the common case many times faster, but it
 * accepts some documents `yaml` refuses and reads some scalars differently. So
 * js-yaml only reads front matter whose every line has a shape both read alike
 * (`shapeOf`, yaml-shape.ts), its plain scalars resolve through `yaml`'s own core tags,
 * and its result is kept only if it passes the schema. Everything else (tags,
 * anchors, aliases, merge keys, odd indentation, multi-line flow or quoted
 * scalars, invalid values) is read by `yaml` exactly as before, so every
 * message and line number stays the same.
 *
 * Neither reader sees front matter past the bounds of front-matter-bounds.ts
 * (1 MiB, 64 levels of nesting, 1,000 keys in a mapping): it is refused with
 * the line that passes them.
 */
import { FAILSAFE_SCHEMA, Type, load as loadFast } from "js-yaml";
import type { Document, LineCounter, ScalarTag } from "yaml";
import type { z } from "zod";
import type { Problem } from "../errors.js";
import { notAnOptionMessage } from "../model/issue-messages.js";
import { parsePublishDate } from "../model/rules.js";
import { boundsProblem, withinSizeBound } from "./front-matter-bounds.js";
import { describeYamlErrors, quoteValue } from "./yaml-problems.js";
import { shapeOf } from "./yaml-shape.js";
import { frontMatterSchema, type FrontMatter } from "../model/sources.js";
import type { ParsedPost } from "../model/snapshot.js";
import { splitFrontMatter } from "./split-front-matter.js";
import { yamlLib } from "./yaml-lib.js";

export { splitFrontMatter } from "./split-front-matter.js";

function lineOf(doc: Document, counter: LineCounter, path: readonly PropertyKey[]): number {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth) as (string | number)[], true);
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    if (range) return counter.linePos(range[0]).line;
  }
  return 1;
}

/**
 * The line of each scalar key of the mapping at `parent`, the first where a key
 * is given twice: read once per mapping, as a mapping of 60,000 unknown keys
 * looked up one by one took minutes.
 */
function keyLines(doc: Document, counter: LineCounter, parent: readonly PropertyKey[]): Map<unknown, number> {
  const container = parent.length === 0 ? doc.contents : doc.getIn(parent as (string | number)[], true);
  const lines = new Map<unknown, number>();
  const { isMap, isScalar } = yamlLib();
  if (isMap(container)) {
    for (const pair of container.items) {
      if (isScalar(pair.key) && pair.key.range && !lines.has(pair.key.value)) lines.set(pair.key.value, counter.linePos(pair.key.range[0]).line);
    }
  }
  return lines;
}

const KIND_OF: Record<string, string> = { number: "a number", boolean: "a yes/no value", object: "no value" };

/**
 * Text expected, and YAML read the plain value as something else (`title: 2024`,
 * `title: true`, `title: null`): the fix is quotes, which YAML's message cannot say.
 */
function notTextMessage(doc: Document, yaml: string, path: readonly PropertyKey[]): string | undefined {
  const node = doc.getIn(path as (string | number)[], true);
  if (!yamlLib().isScalar(node) || !node.range || node.type !== "PLAIN") return undefined;
  const source = yaml.slice(node.range[0], node.range[1]);
  if (source === "") return "is empty";
  const kind = KIND_OF[node.value === null ? "object" : typeof node.value];
  if (!kind) return undefined;
  const key = path.at(-1);
  const fixed = typeof key === "string" ? `${key}: ${quoteValue(source)}` : quoteValue(source);
  return `must be text, but YAML reads ${source} as ${kind}; quote it: ${fixed}`;
}

function issuesToProblems(
  issues: readonly z.core.$ZodIssue[],
  doc: Document,
  yaml: string,
  counter: LineCounter,
  file: string,
  firstLine: number,
): Problem[] {
  const problems: Problem[] = [];
  for (const issue of issues) {
    const at = (line: number) => `${file}:${line + firstLine - 1}`;
    if (issue.code === "unrecognized_keys") {
      const lines = keyLines(doc, counter, issue.path);
      for (const key of issue.keys) {
        const member = [...issue.path, key].join(".");
        problems.push({ where: at(lines.get(key) ?? lineOf(doc, counter, issue.path)), message: `${member}: unknown key` });
      }
      continue;
    }
    const member = issue.path.join(".") || "front matter";
    // A member that is absent gets an issue only when it is required, whatever the issue's code (an enum's is not invalid_type).
    const value: unknown = doc.getIn(issue.path as (string | number)[]);
    const missing = value === undefined;
    const notText = issue.code === "invalid_type" && issue.expected === "string" ? notTextMessage(doc, yaml, issue.path) : undefined;
    const message = missing ? "is required" : (notText ?? notAnOptionMessage(issue, value) ?? issue.message);
    problems.push({ where: at(lineOf(doc, counter, issue.path)), message: `${member}: ${message}` });
  }
  return problems;
}

// YAML line 1 is file line 2, after the opening '---'.
const FIRST_LINE = 2;

type Parsed = { post?: ParsedPost; problems: Problem[] };

function accepted(file: string, meta: FrontMatter, body: string, lines: Record<string, number>): Parsed {
  const publish = parsePublishDate(meta.publishedAt);
  if (!publish) throw new Error("unreachable: publishedAt passed its schema");
  return { post: { file, meta, body, publish, lines }, problems: [] };
}

// yaml's own core scalar tags, in its order, so a plain scalar gets the same
// value on both paths: js-yaml's core schema differs on `0b1`, `-0x1`, `+.5`,
// `1e999`, digit strings too long for a finite number, and `-0`.
let coreScalars: (ScalarTag & { test: RegExp })[] | undefined;
const coreScalarTags = () =>
  (coreScalars ??= new (yamlLib().Schema)({ schema: "core" }).tags.filter(
    (tag): tag is ScalarTag & { test: RegExp } => tag.default === true && "test" in tag && tag.test instanceof RegExp,
  ));

/**
 * Every plain scalar one of the core tags may read as other than a string
 * (null, a boolean, a number), and more: any other is a string, told without
 * loading `yaml` (a date, a slug, a word). test/sources/front-matter-parity.test.ts
 * holds it to matching whatever a core tag matches.
 */
export const MAY_BE_TYPED = /^(?:|~|[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|[-+]?[0-9.][0-9a-fA-FxXoO._]*(?:[eE][-+]?[0-9]+)?)$/;

const FAST_SCHEMA = FAILSAFE_SCHEMA.extend({
  implicit: [
    new Type("tag:cdsnap,2026:yaml-core-scalar", {
      kind: "scalar",
      resolve: (text: string) => MAY_BE_TYPED.test(text) && coreScalarTags().some((tag) => tag.test.test(text)),
      construct: (text: string) => {
        const value = coreScalarTags()
          .find((tag) => tag.test.test(text))!
          .resolve(
            text,
            (message) => {
              throw new Error(message);
            },
            { intAsBigInt: false },
          );
        return yamlLib().isScalar(value) ? value.value : value;
      },
    }),
  ],
});

/** The post, when js-yaml may read it and it is valid; undefined sends it to `parsePostSlow`. */
function parsePostFast(file: string, text: string): Parsed | undefined {
  const parts = splitFrontMatter(text.startsWith("\uFEFF") ? text.slice(1) : text);
  if (typeof parts === "string" || !withinSizeBound(parts.yaml)) return undefined;
  const lines = shapeOf(parts.yaml, FIRST_LINE);
  if (!lines) return undefined;
  let data: unknown;
  try {
    data = loadFast(parts.yaml, {
      schema: FAST_SCHEMA,
      onWarning: (warning) => {
        throw warning;
      },
    });
  } catch {
    // Duplicate keys, mostly: parsePostSlow reads it again and yaml says where.
    return undefined;
  }
  const result = frontMatterSchema.safeParse(data);
  return result.success ? accepted(file, result.data, parts.body, lines) : undefined;
}

/** Parses one post file's text; `file` is its path for messages. */
export function parsePost(file: string, text: string): Parsed {
  return parsePostFast(file, text) ?? parsePostSlow(file, text);
}

/**
 * `parsePost` with `yaml` alone: every post js-yaml may not read, and every
 * invalid one. Exported so the parity test can hold the fast path to it.
 */
export function parsePostSlow(file: string, text: string): Parsed {
  const unbom = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const parts = splitFrontMatter(unbom);
  if (typeof parts === "string") return { problems: [{ where: `${file}:1`, message: parts }] };
  const bounds = boundsProblem(parts.yaml, FIRST_LINE);
  if (bounds) return { problems: [{ where: `${file}:${bounds.line}`, message: bounds.message }] };

  const { LineCounter, parseDocument, isMap, isScalar } = yamlLib();
  const counter = new LineCounter();
  const doc = parseDocument(parts.yaml, {
    schema: "core",
    customTags: [],
    merge: false,
    uniqueKeys: true,
    strict: true,
    prettyErrors: false,
    lineCounter: counter,
    // A mapping used as a key is an unknown key, said with its line; yaml would also print a Node warning of its own.
    logLevel: "error",
  });
  const yamlErrors = [...doc.errors, ...doc.warnings];
  if (yamlErrors.length > 0) {
    return {
      problems: describeYamlErrors(parts.yaml, yamlErrors, counter, FIRST_LINE).map((p) => ({
        where: `${file}:${p.line}`,
        message: p.message,
      })),
    };
  }
  if (doc.contents !== null && !isMap(doc.contents)) {
    return { problems: [{ where: `${file}:${FIRST_LINE}`, message: "front matter: must be a mapping of keys to values" }] };
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 50 }) ?? {};
  } catch (error) {
    return { problems: [{ where: `${file}:${FIRST_LINE}`, message: `front matter: ${(error as Error).message}` }] };
  }
  const result = frontMatterSchema.safeParse(data);
  if (!result.success) return { problems: issuesToProblems(result.error.issues, doc, parts.yaml, counter, file, FIRST_LINE) };
  const lines: Record<string, number> = {};
  if (isMap(doc.contents)) {
    for (const pair of doc.contents.items) {
      if (isScalar(pair.key) && typeof pair.key.value === "string" && pair.key.range) {
        lines[pair.key.value] = counter.linePos(pair.key.range[0]).line + FIRST_LINE - 1;
      }
    }
  }
  return accepted(file, result.data, parts.body, lines);
}
