/**
 * The audit's per-file checks, as the build's write stage runs them on each
 * file it writes, here or in a render worker.
 */
import { routeOfFile } from "../api-paths.js";
import { ROUTES } from "../route-table.js";
import { inspectBytes, type Inspected } from "./audit-tree.js";
import type { Publication } from "../model/shapes.js";
import type { SecretNeedle } from "./scan-secrets.js";

/**
 * The per-file checks of each file a build writes, on the bytes in hand. A
 * post's (or block's) file by id and by slug are the same bytes, handed over
 * as the same buffer: the second path reuses the first's inspection.
 */
export function createInspector(
  orgIds: ReadonlySet<string>,
  needles: readonly SecretNeedle[],
  publication: Publication,
): (rel: string, bytes: Buffer) => Inspected {
  const byBytes = new WeakMap<Buffer, Inspected>();
  return (rel, bytes) => {
    const twin = byBytes.get(bytes);
    const route = routeOfFile(rel);
    if (twin?.facts && twin.problems.length === 0 && route && ROUTES[route.kind].shape === ROUTES[twin.facts.route.kind].shape) {
      return { problems: [], facts: { ...twin.facts, rel, route } };
    }
    const result = inspectBytes(rel, bytes, orgIds, needles, publication);
    byBytes.set(bytes, result);
    return result;
  };
}
