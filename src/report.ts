/** D12: what a build did, per organization, for people and (with --json) for CI. */
import type { ChangedPaths } from "./emit/write-generation.js";
import type { SourceWarning } from "./errors.js";
import type { OrgCounts } from "./render/render-org.js";

/** Per organization: what was published and skipped (OrgCounts), and what was written. */
export interface OrgReport extends OrgCounts {
  orgId: string;
  filesWritten: number;
  filesUnchanged: number;
  filesRemoved: number;
  nextPublishAt: string | null;
}

export interface BuildReport {
  out: string;
  generation: string | null;
  /** False when nothing changed and the live tree was kept as it was. */
  changed: boolean;
  durationMs: number;
  /** Wall time of each phase: database, posts, plan, render and write, audit, reconcile. */
  phasesMs: Record<string, number>;
  /** Post files read and parsed, and those whose previous record was reused unread. */
  postsParsed: number;
  postsReused: number;
  parseThreads: number;
  /** Published posts whose files were rendered (the rest were unchanged). */
  postsRendered: number;
  /** The earliest scheduled publish instant over all organizations: when to build next. */
  nextPublishAt: string | null;
  /** API paths added, changed and removed by this build. */
  changedPaths: ChangedPaths;
  /** The Cache-Tag values whose purge drops every cached answer at those paths (the on-change hook's `tags`). */
  changedTags: string[];
  orgs: OrgReport[];
  /**
   * What the build accepted but a person should look at, sorted by place: a
   * link that leads nowhere, a post or tree file too large for the edge.
   */
  warnings: SourceWarning[];
  /**
   * The preview tree's build (`build --preview`): the same report, of the
   * tree beside `out` that also holds drafts and scheduled posts.
   */
  preview?: BuildReport;
}

interface Style {
  ok(text: string): string;
  dim(text: string): string;
}

const plain: Style = { ok: (t) => t, dim: (t) => t };

/**
 * A count and its noun, the noun plural unless the count is one.
 *
 * @example
 *   plural(1, "post");                     // "1 post"
 *   plural(3, "category", "categories");   // "3 categories"
 */
export function plural(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}

export function formatReport(report: BuildReport, style: Style = plain): string {
  const lines = report.orgs.map((o) =>
    [
      `${o.orgId}: published ${plural(o.postsPublished, "post")}, ${plural(o.blocksPublished, "block")}, ` +
        `${plural(o.categories, "category", "categories")}`,
      `skipped posts: ${o.postsDraft} draft, ${o.postsArchived} archived, ${o.postsScheduled} scheduled`,
      `skipped ${plural(o.blocksUnpublished, "unpublished block")}`,
      `files ${o.filesWritten} written, ${o.filesUnchanged} unchanged, ${o.filesRemoved} removed`,
      ...(o.nextPublishAt ? [`next publish ${o.nextPublishAt}`] : []),
    ].join("; "),
  );
  const summary = report.changed
    ? `built ${report.out} (generation ${report.generation}) in ${report.durationMs} ms`
    : `nothing changed; ${report.out} left as it was (${report.durationMs} ms)`;
  const phases = Object.entries(report.phasesMs)
    .map(([name, ms]) => `${name} ${ms} ms`)
    .join(", ");
  const posts = `posts: ${report.postsParsed} parsed, ${report.postsReused} unchanged and not read, ${report.postsRendered} rendered`;
  const next = report.nextPublishAt ? `next scheduled publish: ${report.nextPublishAt} (build again then)` : "";
  return [...lines, style.ok(summary), style.dim(`${posts}; ${phases}`), next, previewLine(report.preview, style)].filter(Boolean).join("\n");
}

function previewLine(preview: BuildReport | undefined, style: Style): string {
  if (preview === undefined) return "";
  const drafts = preview.orgs.reduce((n, o) => n + o.postsDraft, 0);
  const scheduled = preview.orgs.reduce((n, o) => n + o.postsScheduled, 0);
  const holds = `with ${plural(drafts, "draft")} and ${plural(scheduled, "scheduled post")}`;
  return style.ok(
    preview.changed
      ? `preview: built ${preview.out} (generation ${preview.generation}) ${holds} in ${preview.durationMs} ms`
      : `preview: nothing changed; ${preview.out} left as it was, ${holds} (${preview.durationMs} ms)`,
  );
}
