/**
 * Content lint: what the build accepts but a reader or a search engine would
 * trip on. Each rule is one small function from a post (and its organization's
 * other posts) to findings with `file:line`. Severities (README, "Authoring"):
 * an error is something visibly broken on the published site (a citation with
 * no reference, a link to a post that does not exist); a warning is something
 * to look at that can be intended (a scheduled post, an uncited reference, a
 * long description).
 */
import path from "node:path";
import { codePointLength, isBlank, SLUG_PATTERN } from "../model/rules.js";
import type { PostRecord } from "../model/snapshot.js";
import type { PostSource } from "./post-source.js";
import type { BodyScan } from "./scan-markdown.js";

/** What search engines show of a title and of a description, in characters. */
export const SEO_TITLE_MAX = 60;
export const SEO_DESCRIPTION_MAX = 160;
/** D3: a derived excerpt is cut to this; an explicit one should not be longer. */
export const EXCERPT_MAX = 200;

export type Severity = "error" | "warning";

export interface Finding {
  rule: string;
  severity: Severity;
  /** `file:line` relative to the content folder, or `table[key]` for database rows. */
  where: string;
  message: string;
}

export interface LintContext {
  post: PostRecord;
  source: PostSource;
  scan: BodyScan;
  /** The organization's posts by slug and by file (relative to the content folder). */
  bySlug: ReadonlyMap<string, PostRecord>;
  byFile: ReadonlyMap<string, PostRecord>;
  /** Does this file exist in the content folder (relative path)? For links to posts the build refused. */
  fileExists(rel: string): boolean;
  /** Site paths under which the frontend serves posts by slug (`/blog/`): `/blog/<slug>` links are checked too. */
  postUrlPrefixes: readonly string[];
  now: number;
}

export type LintRule = (ctx: LintContext) => Finding[];

function finding(ctx: LintContext, rule: string, severity: Severity, line: number, message: string): Finding {
  return { rule, severity, where: `${ctx.post.file}:${line}`, message };
}

function isLive(post: PostRecord, now: number): boolean {
  return post.meta.status === "published" && post.publish.instant <= now;
}

/** `[N]` with no N-th entry in `references` (error): the reader sees a citation that leads nowhere. */
export const citationWithoutReference: LintRule = (ctx) => {
  const references = ctx.post.meta.references;
  if (references === undefined) return []; // older posts keep their references inline (D3)
  return ctx.scan.markers
    .filter((m) => m.n < 1 || m.n > references.length)
    .map((m) =>
      finding(
        ctx,
        "citation-without-reference",
        "error",
        m.line,
        `[${m.n}] cites reference ${m.n}, but references has ${references.length} entr${references.length === 1 ? "y" : "ies"}`,
      ),
    );
};

/** A `references` entry no `[N]` cites (warning): a source listed for no claim. */
export const referenceNeverCited: LintRule = (ctx) => {
  const references = ctx.post.meta.references ?? [];
  const cited = new Set(ctx.scan.markers.map((m) => m.n));
  return references.flatMap((ref, i) =>
    cited.has(i + 1)
      ? []
      : [
          finding(
            ctx,
            "reference-never-cited",
            "warning",
            ctx.source.lineOf(["references", i]),
            `references.${i} (${ref.source}) is never cited; cite it as [${i + 1}] or remove it`,
          ),
        ],
  );
};

/** A featured image with empty alt text (warning): screen readers and image search get nothing. */
export const featuredImageAlt: LintRule = (ctx) => {
  const image = ctx.post.meta.featuredImage;
  if (!image || image.alt.trim() !== "") return [];
  return [
    finding(ctx, "featured-image-alt", "warning", ctx.source.lineOf(["featuredImage", "alt"]), "featuredImage.alt is empty; describe the image"),
  ];
};

/** An explicit excerpt over the length a derived one is cut to (warning). */
export const excerptTooLong: LintRule = (ctx) => {
  const excerpt = ctx.post.meta.excerpt;
  if (excerpt === undefined) return []; // derived excerpts are cut to EXCERPT_MAX already
  const length = codePointLength(excerpt);
  if (length <= EXCERPT_MAX) return [];
  return [
    finding(ctx, "excerpt-too-long", "warning", ctx.source.lineOf(["excerpt"]), `excerpt is ${length} characters; keep it to ${EXCERPT_MAX}`),
  ];
};

/** An SEO description longer than a search result shows (warning). */
export const seoDescriptionTooLong: LintRule = (ctx) => {
  const description = ctx.post.meta.seoMetadata?.description;
  if (description === undefined) return [];
  const length = codePointLength(description);
  if (length <= SEO_DESCRIPTION_MAX) return [];
  return [
    finding(
      ctx,
      "seo-description-too-long",
      "warning",
      ctx.source.lineOf(["seoMetadata", "description"]),
      `seoMetadata.description is ${length} characters; search results show about ${SEO_DESCRIPTION_MAX}`,
    ),
  ];
};

/** An SEO title (or the title standing in for it, D3) longer than a search result shows (warning). */
export const seoTitleTooLong: LintRule = (ctx) => {
  const explicit = ctx.post.meta.seoMetadata?.title;
  const title = isBlank(explicit) ? ctx.post.meta.title : explicit;
  const length = codePointLength(title);
  if (length <= SEO_TITLE_MAX) return [];
  const [member, line] = isBlank(explicit)
    ? ["title (the SEO title when seoMetadata.title is absent or blank)", ctx.source.lineOf(["title"])]
    : ["seoMetadata.title", ctx.source.lineOf(["seoMetadata", "title"])];
  return [
    finding(ctx, "seo-title-too-long", "warning", line, `${member} is ${length} characters; search results show about ${SEO_TITLE_MAX}`),
  ];
};

/** A published post dated in the future (warning): it is scheduled, and appears only with a build after that instant. */
export const scheduledPost: LintRule = (ctx) => {
  const { post } = ctx;
  if (post.meta.status !== "published" || post.publish.instant <= ctx.now) return [];
  const when = new Date(post.publish.instant).toISOString();
  return [
    finding(
      ctx,
      "scheduled-post",
      "warning",
      ctx.source.lineOf(["publishedAt"]),
      `publishedAt is in the future: the post is scheduled and appears with the first build after ${when}`,
    ),
  ];
};

/**
 * Internal links (README, "Links between posts"): `post:<slug>`, a single
 * slug-shaped segment `./<slug>` or `../<slug>`, a relative path to another
 * `.md` file of the same organization, and `<prefix><slug>` for each
 * `--post-url-prefix` given (`/blog/`). Anything else (absolute URLs, other
 * site paths, anchors) is the frontend's business and not checked.
 */
type InternalLink = { kind: "slug"; slug: string } | { kind: "file"; rel: string } | null;

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function classifyLink(url: string, from: string, prefixes: readonly string[]): InternalLink {
  const target = url.replace(/[?#].*$/s, "");
  if (target.startsWith("post:")) return { kind: "slug", slug: decode(target.slice("post:".length)) };
  for (const prefix of prefixes) {
    const rest = target.startsWith(prefix) ? target.slice(prefix.length).replace(/\/$/, "") : null;
    if (rest && !rest.includes("/")) return { kind: "slug", slug: decode(rest) };
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("/") || target === "") return null;
  const slugLike = /^\.\.?\/([^/]+)\/?$/.exec(target);
  if (slugLike && SLUG_PATTERN.test(slugLike[1]!)) return { kind: "slug", slug: slugLike[1]! };
  if (!target.toLowerCase().endsWith(".md")) return null;
  return { kind: "file", rel: path.posix.normalize(path.posix.join(path.posix.dirname(from), decode(target))) };
}

export const brokenInternalLink: LintRule = (ctx) => {
  const orgFolder = ctx.post.file.split("/")[0]!;
  const out: Finding[] = [];
  for (const link of ctx.scan.links) {
    const internal = classifyLink(link.url, ctx.post.file, ctx.postUrlPrefixes);
    if (internal === null) continue;
    let problem: string | null = null;
    if (internal.kind === "slug") {
      if (!ctx.bySlug.has(internal.slug)) problem = `links to ${link.url}, but no post of this organization has the slug "${internal.slug}"`;
    } else if (!internal.rel.startsWith(`${orgFolder}/`)) {
      problem = `links to ${link.url}, which is outside this organization's folder ${orgFolder}/`;
    } else if (!ctx.byFile.has(internal.rel) && !ctx.fileExists(internal.rel)) {
      problem = `links to ${link.url}, but ${internal.rel} does not exist`;
    }
    if (problem) out.push(finding(ctx, "broken-internal-link", "error", link.line, problem));
  }
  return out;
};

/** A live post linking to a post readers cannot see yet (warning): a draft, archived or later-scheduled post. */
export const linkToUnpublished: LintRule = (ctx) => {
  if (!isLive(ctx.post, ctx.now)) return [];
  const out: Finding[] = [];
  for (const link of ctx.scan.links) {
    const internal = classifyLink(link.url, ctx.post.file, ctx.postUrlPrefixes);
    const target =
      internal?.kind === "slug" ? ctx.bySlug.get(internal.slug) : internal?.kind === "file" ? ctx.byFile.get(internal.rel) : undefined;
    if (!target || isLive(target, ctx.now)) continue;
    const state = target.meta.status === "published" ? `scheduled for ${new Date(target.publish.instant).toISOString()}` : target.meta.status;
    out.push(
      finding(ctx, "link-to-unpublished", "warning", link.line, `links to ${link.url} (${target.file}), which is ${state}: readers get a broken link until it is published`),
    );
  }
  return out;
};

/** Every rule, in the order findings are reported. */
export const LINT_RULES: readonly LintRule[] = [
  citationWithoutReference,
  referenceNeverCited,
  brokenInternalLink,
  linkToUnpublished,
  featuredImageAlt,
  excerptTooLong,
  seoTitleTooLong,
  seoDescriptionTooLong,
  scheduledPost,
];
