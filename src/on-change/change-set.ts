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
import { entityTagOf, isWriteRoute, orgTagOf, ROUTES } from "../route-table.js";

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
  return { event: "access", paths: [], tags: orgs.map(orgTagOf), orgs };
}

/** A build's change, from its report's paths and tags. */
export function buildChange(changedPaths: ChangedPaths, tags: readonly string[]): Change {
  const paths = sorted([...changedPaths.added, ...changedPaths.changed, ...changedPaths.removed]);
  const orgs = paths.map((p) => parseApiPath(p)?.orgId).filter((id): id is string => id !== undefined);
  return { event: "build", paths, tags: sorted(tags), orgs: sorted(orgs) };
}

/**
 * The tags of the answers at the changed paths before and after a build: both,
 * because a cache holds the answer as it was. Only a by-slug answer's tag needs
 * its item's id (the slug may have moved to another item): the new one comes
 * from `idAfter` (what the build just rendered), the old one from the file in
 * the tree it replaced, which only a changed or removed path had. So a fresh
 * build reads nothing here, and an edit reads its few old files.
 */
export async function changedTags(
  changes: ChangedPaths,
  trees: { before: string | null; after: string | null },
  idAfter: (apiPath: string) => string | undefined,
): Promise<string[]> {
  const tags = new Set<string>();
  const reads: { route: Route; file: string }[] = [];
  const before = new Set([...changes.changed, ...changes.removed]);
  const after = new Set([...changes.added, ...changes.changed]);
  for (const apiPath of new Set([...before, ...after])) {
    const route = parseApiPath(apiPath);
    if (!route || isWriteRoute(route)) continue;
    if (ROUTES[route.kind].role !== "bySlug") {
      tags.add(entityTagOf(route, null)!);
      continue;
    }
    if (before.has(apiPath) && trees.before) reads.push({ route, file: path.join(trees.before, fileOf(route)) });
    if (!after.has(apiPath)) continue;
    const id = idAfter(apiPath);
    if (id !== undefined) tags.add(entityTagOf(route, { id })!);
    else if (trees.after) reads.push({ route, file: path.join(trees.after, fileOf(route)) });
  }
  await mapLimit(reads, FILE_CONCURRENCY, async ({ route, file }) => {
    const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return null;
      throw error;
    });
    if (text !== null) tags.add(entityTagOf(route, JSON.parse(text))!);
  });
  return sorted(tags);
}
