/**
 * `cdsnap check`: every problem the build would refuse and every warning it
 * would print (read with the build's own readers, so the two can never
 * disagree), plus the content lint of lint-rules.ts, without writing anything:
 * the database is opened read-only, no output folder is involved, and the
 * tree files whose size matters are rendered in memory only.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileOf } from "../api-paths.js";
import { renderedBytes } from "../emit/file-bytes.js";
import type { Problem, SourceWarning } from "../errors.js";
import { postsWarned, treeFileWarnings, type TreeFileSize } from "../model/edge-file-limit.js";
import { parsedOnly, type OrgSnapshot, type PostRecord } from "../model/snapshot.js";
import { planOrg, renderPostFiles, type RenderedFile } from "../render/render-org.js";
import { isGone } from "../sources/entry-kind.js";
import { loadSources } from "../sources/load-sources.js";
import { loadBody } from "../sources/read-posts.js";
import { LINT_RULES, type Finding, type LintRule } from "./lint-rules.js";
import { locatePost } from "./post-source.js";
import { scanMarkdown } from "./scan-markdown.js";

export interface CheckOptions {
  db: string;
  content: string;
  /** Check only these organizations (and only their content folders). */
  orgs?: readonly string[];
  /** The instant deciding what is scheduled; defaults to the clock. */
  now?: Date;
  /** Site paths under which the frontend serves posts by slug, e.g. `/blog/` (see lint-rules.ts). */
  postUrlPrefixes?: readonly string[];
  rules?: readonly LintRule[];
}

export interface CheckResult {
  /** No error at all: nothing the build refuses, and no lint error. */
  ok: boolean;
  /**
   * No error the build refuses (rule "build"): a build would succeed, and
   * publish whatever lint errors there are, visibly broken.
   */
  buildOk: boolean;
  errors: Finding[];
  warnings: Finding[];
  orgsChecked: number;
  /** The `*.md` entries looked at, those the build refuses included. */
  filesChecked: number;
  /** The posts the build accepts, which the lint rules read. */
  postsChecked: number;
}

function byWhere(a: Finding, b: Finding): number {
  return a.where.localeCompare(b.where, "en", { numeric: true }) || a.message.localeCompare(b.message);
}

function buildErrors(problems: readonly Problem[]): Finding[] {
  return problems.map((p) => ({ rule: "build", severity: "error", where: p.where, message: p.message }));
}

function buildWarnings(warnings: readonly SourceWarning[]): Finding[] {
  return warnings.map((w) => ({ rule: w.rule, severity: "warning", where: w.where, message: w.message }));
}

interface LintSettings {
  contentDir: string;
  rules: readonly LintRule[];
  postUrlPrefixes: readonly string[];
  now: number;
}

function sizeOf(file: RenderedFile, post?: string): TreeFileSize {
  return { rel: fileOf(file.route), bytes: renderedBytes(file).length, post };
}

/**
 * Lints an organization's posts, and renders the tree files a build would
 * make of them (in memory, one post at a time) to find those too large for
 * the edge; `warned` names the posts whose file is too large already.
 */
function lintOrg(org: OrgSnapshot, posts: readonly PostRecord[], settings: LintSettings, warned: ReadonlySet<string>): Finding[] {
  const { contentDir, rules, postUrlPrefixes, now } = settings;
  const bySlug = new Map<string, PostRecord>();
  const byFile = new Map<string, PostRecord>();
  for (const post of posts) {
    if (!bySlug.has(post.meta.slug)) bySlug.set(post.meta.slug, post);
    byFile.set(post.file, post);
  }
  const plan = planOrg(org, posts, now);
  const published = new Set(plan.posts);
  const sizes = plan.files.map((file) => sizeOf(file));
  const fileExists = (rel: string) => existsSync(path.join(contentDir, rel));
  const perPost = posts.map((post) => {
    // The reader validated this file a moment ago; read again only to locate lines (synchronously, as the reader does).
    let text: string;
    try {
      text = readFileSync(path.join(contentDir, post.file), "utf8");
    } catch (error) {
      // Removed since: nothing left to lint.
      if (isGone(error)) return [];
      throw error;
    }
    const body = post.body ?? loadBody(contentDir, post);
    if (published.has(post)) sizes.push(...renderPostFiles(org.id, post, body, plan.categories).map((file) => sizeOf(file, post.file)));
    const source = locatePost(text, body);
    const scan = scanMarkdown(body, source.bodyLine);
    return rules.flatMap((rule) => rule({ post, source, scan, bySlug, byFile, fileExists, postUrlPrefixes, now }));
  });
  return [...perPost.flat(), ...buildWarnings(treeFileWarnings(sizes, warned))];
}

/**
 * Checks the sources; never throws for bad content (that is in the result),
 * only for a usage problem (a missing database or content folder).
 *
 * @example
 *   const result = await checkSources({ db: "cdsnap.db", content: "content" });
 *   if (!result.ok) process.exitCode = 1;
 */
export async function checkSources(options: CheckOptions): Promise<CheckResult> {
  const now = (options.now ?? new Date()).getTime();
  const orgIds = options.orgs && options.orgs.length > 0 ? [...new Set(options.orgs)].sort() : undefined;
  const sources = await loadSources({ db: options.db, content: options.content, orgs: orgIds });
  const { snapshot, posts, problems } = sources;
  const findings = [...buildErrors(problems), ...buildWarnings(sources.warnings)];
  const warned = postsWarned(sources.warnings);
  const settings: LintSettings = {
    contentDir: options.content,
    rules: options.rules ?? LINT_RULES,
    postUrlPrefixes: options.postUrlPrefixes ?? [],
    now,
  };
  let postsChecked = 0;
  for (const org of snapshot.orgs) {
    const orgPosts = parsedOnly(posts!.byOrg.get(org.id) ?? []);
    postsChecked += orgPosts.length;
    findings.push(...lintOrg(org, orgPosts, settings, warned));
  }
  const errors = findings.filter((f) => f.severity === "error").sort(byWhere);
  const warnings = findings.filter((f) => f.severity === "warning").sort(byWhere);
  return {
    ok: errors.length === 0,
    buildOk: problems.length === 0,
    errors,
    warnings,
    orgsChecked: snapshot.orgs.length,
    filesChecked: posts!.files,
    postsChecked,
  };
}
