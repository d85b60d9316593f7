/**
 * The audit of one tree folder: proves it is safe to publish, given what the
 * sources publish ({@link AuditExpectations}) and the stored secrets.
 *
 * Per file: no secret in its bytes or its path, a path the interface describes
 * (api-paths.ts decides), an organization that exists, strict UTF-8 JSON that
 * matches the route's response shape exactly. Then, across files, the rules of
 * tree-rules.ts. Every problem is collected before the answer, with the file
 * (relative to the tree) and what to do.
 *
 * @example
 *   const result = await auditTree(gen.tree, expectations, secrets);
 *   if (!result.ok) console.error(formatProblems(result.problems));
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { z } from "zod";
import { routeOfFile, type Route } from "../api-paths.js";
import { FILE_CONCURRENCY, mapLimit } from "../concurrency.js";
import { sha256 } from "../emit/file-bytes.js";
import type { Problem } from "../errors.js";
import type { blockSchema, categoryListSchema, contentDetailSchema, contentPageSchema, organizationSchema } from "../model/api.js";
import { SHAPES, shapeIn, type Publication } from "../model/shapes.js";
import { ROUTES } from "../route-table.js";
import { canonicalJson, compareCodeUnits, isCanonicalText, type MemberSpans } from "../render/canonical-json.js";
import { listTree } from "../emit/list-tree.js";
import type { AuditExpectations } from "./audit-inputs.js";
import type { StoredSecret } from "./read-secrets.js";
import { needlesOf, redactSecrets, scanForSecrets, type SecretNeedle } from "./scan-secrets.js";
import { checkTree, type FileFacts } from "./tree-rules.js";

export interface AuditResult {
  ok: boolean;
  /** Everything that makes the tree unsafe to publish; `where` is a path relative to the tree. */
  problems: Problem[];
  /** What the audit could not check, and why. */
  warnings: Problem[];
  filesChecked: number;
  /** False when posts were checked for consistency within the tree only (no content folder). */
  postSourcesChecked: boolean;
}

/** "ContentDetail" → "content detail", for messages. */
const nounOf = (shape: string) => shape.replace(/(?<=[a-z])(?=[A-Z])/g, " ").toLowerCase();

const MAX_ISSUES_PER_FILE = 5;
const utf8 = new TextDecoder("utf-8", { fatal: true });
const hashOf = (json: unknown) => sha256(canonicalJson(json));

/** What one file says, once it has passed the per-file checks; the cross-file rules use it. */
function factsOf(rel: string, route: Route, json: unknown, hash: string, itemHash: (item: unknown, i: number) => string): FileFacts {
  const facts: FileFacts = { rel, route, hash };
  // By the shape the route table gives the file: the same shape says the same things on every path.
  switch (ROUTES[route.kind].shape) {
    case "Block": {
      const b = json as z.infer<typeof blockSchema>;
      facts.item = { id: b.id, slug: b.slug, hash: facts.hash, listHash: facts.hash };
      break;
    }
    case "ContentDetail": {
      const d = json as z.infer<typeof contentDetailSchema>;
      // The interface's list item of a post is the detail without its body and references.
      const { content: _content, references, ...summary } = d;
      facts.item = {
        id: d.id,
        slug: d.slug,
        hash: facts.hash,
        listHash: hashOf(summary),
        referencesHash: hashOf(references ?? []),
      };
      break;
    }
    case "BlockList":
      facts.items = (json as { items: { id: string; slug: string }[] }).items.map((item, i) => ({ id: item.id, slug: item.slug, hash: itemHash(item, i) }));
      break;
    case "ContentList":
    case "ContentPage": {
      const { items, meta } = json as z.infer<typeof contentPageSchema>;
      facts.items = items.map((item, i) => ({ id: item.id, slug: item.slug, hash: itemHash(item, i), category: item.categorySlug }));
      if (meta) facts.pagination = meta.pagination;
      break;
    }
    case "CategoryList": {
      const { items } = json as z.infer<typeof categoryListSchema>;
      facts.ids = items.map((c) => c.id);
      facts.slugs = items.map((c) => c.slug);
      break;
    }
    case "Organization":
      facts.ids = [(json as z.infer<typeof organizationSchema>).id];
      break;
    default:
      break;
  }
  return facts;
}

export interface Inspected {
  problems: Problem[];
  facts?: FileFacts;
}

export interface AuditTreeOptions {
  /** Files whose bytes were already inspected (written by this build). */
  inspected?: ReadonlyMap<string, Inspected>;
  /**
   * Facts of files a previous audit passed, with the hash of their bytes, and
   * the hash of each file now: a file whose bytes did not change (and no
   * secret changed: the caller decides) is not read again.
   */
  previous?: ReadonlyMap<string, { sha256: string; facts: FileFacts }>;
  sha256Of?: (rel: string) => string | undefined;
  /**
   * Every file the tree holds, when the caller made the tree and knows (the
   * build's next generation: walking its tens of thousands of folders again
   * cost a fifth of an edit's rebuild). Without it the tree is walked.
   */
  files?: readonly string[];
  /** Which tree's shapes the files are held to; default the public one. */
  publication?: Publication;
}

/**
 * The per-file checks on bytes already in hand: the build calls this as it
 * writes each file, so a full build is audited without reading its tree back.
 * A file of the preview tree is held to its preview shape (a post's answers
 * carry its status there, and must not in the public tree).
 */
export function inspectBytes(
  rel: string,
  bytes: Buffer,
  orgIds: ReadonlySet<string>,
  needles: readonly SecretNeedle[],
  publication: Publication = "public",
): Inspected {
  const problems = scanForSecrets(rel, bytes, needles);
  const fail = (message: string): Inspected => ({ problems: [...problems, { where: rel, message }] });

  const route = routeOfFile(rel);
  if (!route) {
    return fail(
      "is not a file the interface describes (no API path answers with it); " +
        "remove it (cdsnap build writes only described files)",
    );
  }
  if (!orgIds.has(route.orgId)) {
    return fail(
      `belongs to organization "${route.orgId}", which has no row in the database; ` +
        "remove its files (a full cdsnap build does)",
    );
  }
  let text: string;
  let json: unknown;
  try {
    text = utf8.decode(bytes);
    json = JSON.parse(text);
  } catch (error) {
    const why = error instanceof SyntaxError ? `is not valid JSON (${error.message})` : "is not valid UTF-8 text";
    return fail(`${why}; rebuild the tree with cdsnap build`);
  }
  const shape = ROUTES[route.kind].shape;
  // What a client reads is the parsed JSON: a file can spell a secret with
  // escapes (`\u0073k_…`) its bytes do not show. The build writes canonical
  // JSON, so only a file written otherwise is searched again, in its canonical
  // spelling. The text is proven canonical without serializing it again.
  const items = (json as { items?: unknown } | null)?.items;
  const members: MemberSpans | undefined =
    (shape === "BlockList" || shape === "ContentList" || shape === "ContentPage") && Array.isArray(items) ? { of: items, spans: [] } : undefined;
  const proven = isCanonicalText(text, json, members);
  let canonical: string | undefined;
  if (!proven) {
    const serialized = canonicalJson(json);
    if (serialized !== text) {
      canonical = serialized;
      if (problems.length === 0) problems.push(...scanForSecrets(rel, Buffer.from(serialized, "utf8"), needles));
    }
  }
  const heldTo = shapeIn(publication, shape);
  const parsed = SHAPES[heldTo].schema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues;
    const listed = issues.slice(0, MAX_ISSUES_PER_FILE).map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`);
    const more = issues.length > MAX_ISSUES_PER_FILE ? `; and ${issues.length - MAX_ISSUES_PER_FILE} more` : "";
    return fail(
      `does not match the ${nounOf(heldTo)} response of the interface (${listed.join("; ")}${more}); ` +
        "a member the interface does not name may be a leak: find where it came from, then rebuild",
    );
  }
  // A canonical text's hash is that of the bytes it was decoded from (past the
  // byte order mark the decoder skips); a list item's, that of its span of the
  // text, which is its canonical JSON.
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const hash = canonical !== undefined ? sha256(canonical) : sha256(start === 0 ? bytes : bytes.subarray(start));
  const ascii = bytes.length - start === text.length;
  const spans = proven ? members?.spans : undefined;
  const itemHash = spans
    ? (_: unknown, i: number) => {
        const from = spans[2 * i]!;
        const to = spans[2 * i + 1]!;
        return sha256(ascii ? bytes.subarray(start + from, start + to) : text.slice(from, to));
      }
    : hashOf;
  return { problems, facts: factsOf(rel, route, json, hash, itemHash) };
}

/** Audits the tree under `tree` (a generation's tree folder, or `--out` resolved). */
export async function auditTree(
  tree: string,
  expectations: AuditExpectations,
  secrets: readonly StoredSecret[],
  options: AuditTreeOptions = {},
): Promise<AuditResult & { facts: FileFacts[] }> {
  const { needles, warnings } = needlesOf(secrets);
  const postSourcesChecked = expectations.orgs.every((o) => o.posts !== null);
  if (!postSourcesChecked) {
    warnings.push({
      where: "posts",
      message:
        "no content folder was given (--content), so the post-source checks were skipped: posts were checked for " +
        "consistency within the tree only, not against their sources (draft, archived, scheduled); pass --content for those",
    });
  }
  const { files, others } = options.files
    ? { files: [...options.files].sort(compareCodeUnits), others: [] }
    : listTree(tree);
  const problems: Problem[] = [];
  for (const rel of [...files, ...others]) problems.push(...scanForSecrets(rel, Buffer.from(rel, "utf8"), needles, true));
  for (const rel of others) {
    problems.push({ where: rel, message: "is not a regular file (a tree holds only regular files and folders); remove it" });
  }
  const inspected = await mapLimit(files, FILE_CONCURRENCY, async (rel): Promise<Inspected> => {
    const known = options.inspected?.get(rel);
    if (known) return known;
    const previous = options.previous?.get(rel);
    if (previous && previous.sha256 === options.sha256Of?.(rel)) return { problems: [], facts: previous.facts };
    return inspectBytes(rel, await readFile(path.join(tree, rel)), expectations.orgIds, needles, options.publication);
  });
  const facts: FileFacts[] = [];
  for (const i of inspected) {
    problems.push(...i.problems);
    if (i.facts) facts.push(i.facts);
  }
  problems.push(...checkTree(facts, expectations));
  const ok = problems.length === 0;
  // A path or an id may be the secret found: what the report prints must not hold it.
  const report = ok ? { problems, facts } : redactSecrets({ problems, facts }, needles);
  return {
    ok,
    problems: sortProblems(report.problems),
    warnings: sortProblems(warnings),
    filesChecked: files.length,
    postSourcesChecked,
    facts: report.facts,
  };
}

export function sortProblems(problems: readonly Problem[]): Problem[] {
  return [...problems].sort((a, b) => compareCodeUnits(a.where, b.where) || compareCodeUnits(a.message, b.message));
}
