/**
 * The changes the on-change hook hears of, as the paths, tags and
 * organizations of its stdin (model/change-event.ts): a PATCH's organization
 * files, a build's changed paths, an organization whose readers changed.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileOf, parseApiPath, pathOf, type Route } from "../api-paths.js";
import { FILE_CONCURRENCY, mapLimit } from "../concurrency.js";
import type { ChangedPaths } from "../emit/write-generation.js";
import type { ChangeEvent } from "../model/change-event.js";
import { entityTagOf, isWriteRoute, ROUTES } from "../route-table.js";

/** A change as its source reports it; the hook runner stamps the time and merges. */
export type Change = Omit<ChangeEvent, "time" | "merged">;

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** PATCHes (or the server's repair on start) rewrote these organizations' files. */
export function patchChange(orgIds: Iterable<string>): Change {
  const orgs = sorted(orgIds);
  return {
    event: "patch",
    paths: sorted(orgs.map((orgId) => pathOf({ kind: "organization", orgId }))),
    tags: sorted(orgs.map((orgId) => entityTagOf({ kind: "organization", orgId }, null)!)),
    orgs,
  };
}

/** Keys or allowed origins of these organizations changed: every cached answer of theirs may now go to the wrong caller. */
export function accessChange(orgIds: Iterable<string>): Change {
  const orgs = sorted(orgIds);
  return { event: "access", paths: [], tags: orgs.map((orgId) => `org:${orgId}`), orgs };
}

/** A build's change, from its report's paths and tags. */
export function buildChange(changedPaths: ChangedPaths, tags: readonly string[]): Change {
  const paths = sorted([...changedPaths.added, ...changedPaths.changed, ...changedPaths.removed]);
  const orgs = paths.map((p) => parseApiPath(p)?.orgId).filter((id): id is string => id !== undefined);
  return { event: "build", paths, tags: sorted(tags), orgs: sorted(orgs) };
}

/** True when the change makes nothing stale: no hook runs for it. */
export const isEmptyChange = (change: Change) => change.paths.length === 0 && change.tags.length === 0;

/**
 * The tags of the answers at `paths` before and after a build: both, because a
 * cache holds the answer as it was. Only a by-slug answer's tag needs its file
 * (the slug may have moved to another item); a tree that is null or lacks the
 * file has no answer there.
 */
export async function changedTags(paths: readonly string[], trees: { before: string | null; after: string | null }): Promise<string[]> {
  const tags = new Set<string>();
  const bySlug: Route[] = [];
  for (const apiPath of paths) {
    const route = parseApiPath(apiPath);
    if (!route || isWriteRoute(route)) continue;
    if (ROUTES[route.kind].role === "bySlug") bySlug.push(route);
    else tags.add(entityTagOf(route, null)!);
  }
  const files = bySlug.flatMap((route) =>
    [trees.before, trees.after].filter((tree) => tree !== null).map((tree) => ({ route, file: path.join(tree, fileOf(route)) })),
  );
  await mapLimit(files, FILE_CONCURRENCY, async ({ route, file }) => {
    const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return null;
      throw error;
    });
    if (text !== null) tags.add(entityTagOf(route, JSON.parse(text))!);
  });
  return sorted(tags);
}
