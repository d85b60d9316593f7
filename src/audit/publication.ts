/**
 * D1 as the audit reads it: a post may be published when its status is
 * `published` and its publish instant is not after the build. Written apart
 * from the renderer's reading, from the front matter as the author wrote it,
 * so that a renderer bug publishing a draft, an archived or a scheduled post
 * meets a second opinion instead of its own answer.
 *
 * @example
 *   hiddenStateOf({ status: "published", publishedAt: "2026-03-02" }, Date.parse("2026-03-01T12:00:00Z")); // "scheduled"
 */
import type { FrontMatter } from "../model/sources.js";

/** Why a post may not be published. */
export type HiddenState = Exclude<FrontMatter["status"], "published"> | "scheduled";

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const ZONE = /(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The instant a `publishedAt` value names, in ms since the epoch; NaN when
 * unreadable. JavaScript reads a date alone as UTC but a date-time without a
 * zone as local time, so both are given their UTC zone first (D9: no offset is UTC).
 */
export function publishInstantOf(publishedAt: string): number {
  if (DATE_ONLY.test(publishedAt)) return Date.parse(`${publishedAt}T00:00:00Z`);
  return Date.parse(ZONE.test(publishedAt) ? publishedAt : `${publishedAt}Z`);
}

/** Null when the post may be published at `now`; otherwise why not. */
export function hiddenStateOf(meta: Pick<FrontMatter, "status" | "publishedAt">, now: number): HiddenState | null {
  if (meta.status !== "published") return meta.status;
  // Written so that an instant that could not be read (NaN) keeps the post hidden.
  return publishInstantOf(meta.publishedAt) <= now ? null : "scheduled";
}
