/** D12: what a build did, per organization, for people and (with --json) for CI. */
export interface OrgReport {
  orgId: string;
  postsPublished: number;
  postsDraft: number;
  postsArchived: number;
  postsScheduled: number;
  blocksPublished: number;
  blocksUnpublished: number;
  categories: number;
  filesWritten: number;
  filesUnchanged: number;
  filesRemoved: number;
  renderMs: number;
  nextPublishAt: string | null;
}

export interface BuildReport {
  out: string;
  generation: string | null;
  /** False when nothing changed and the live tree was kept as it was. */
  changed: boolean;
  durationMs: number;
  /** The earliest scheduled publish instant over all organizations: when to build next. */
  nextPublishAt: string | null;
  orgs: OrgReport[];
}

export function formatReport(report: BuildReport): string {
  const lines = report.orgs.map((o) =>
    [
      `${o.orgId}:`,
      `published ${o.postsPublished} posts, ${o.blocksPublished} blocks, ${o.categories} categories;`,
      `skipped ${o.postsDraft} draft, ${o.postsArchived} archived, ${o.postsScheduled} scheduled posts, ${o.blocksUnpublished} unpublished blocks;`,
      `files ${o.filesWritten} written, ${o.filesUnchanged} unchanged, ${o.filesRemoved} removed;`,
      `${o.renderMs} ms`,
      o.nextPublishAt ? `; next publish ${o.nextPublishAt}` : "",
    ].join(" "),
  );
  const summary = report.changed
    ? `built ${report.out} (generation ${report.generation}) in ${report.durationMs} ms`
    : `nothing changed; ${report.out} left as it was (${report.durationMs} ms)`;
  const next = report.nextPublishAt ? `next scheduled publish: ${report.nextPublishAt} (build again then)` : "";
  return [...lines, summary, next].filter(Boolean).join("\n");
}
