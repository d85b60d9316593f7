/**
 * The audit's per-file checks, as the build's write stage runs them on each
 * file it writes, here or in a render worker.
 */
import type { z } from "zod";
import { routeOfFile } from "../api-paths.js";
import { sha256 } from "../emit/file-bytes.js";
import { SHAPES, shapeIn, type Publication, type ShapeName } from "../model/shapes.js";
import { ROUTES } from "../route-table.js";
import { assembledBytes, isAssembledFrom, type AssembledParts } from "./assembled-bytes.js";
import { inspectBytes, type Inspected } from "./audit-tree.js";
import { scanForSecrets, type SecretNeedle } from "./scan-secrets.js";
import type { FileFacts, ListItemFacts } from "./tree-rules.js";

/** A list with more new items than this (and an eighth of its items) is checked whole. */
const MOST_CHECKED_ALONE = 64;

/** The schema of a list shape's items (the same object for a list and its pages), or none. */
function itemSchemaOf(shape: ShapeName): unknown {
  const items = (SHAPES[shape].schema as Partial<z.ZodObject>).shape?.items as Partial<z.ZodArray> | undefined;
  return items?.element;
}

/**
 * The per-file checks of each file a build writes, on the bytes in hand. A
 * post's (or block's) file by id and by slug are the same bytes, handed over
 * as the same buffer: the second path reuses the first's inspection.
 *
 * A list or a page handed over with the items it is assembled from (`parts`)
 * is checked whole once; each of its items is then known to be valid for its
 * shape, with its facts. A page made of known items alone is not parsed: its
 * bytes are proven to be those items and its own head and tail, which are
 * checked as a page with no items, and the whole is searched for secrets. An
 * organization's pages repeat its list three times over (the list, its pages
 * and its categories' pages): each item is now parsed and checked once.
 * `recorded` gives the facts the live tree's audit recorded for a path (a
 * trusted state, made by this code): a rebuild checks only the items of a
 * list that its last audit did not.
 */
export function createInspector(
  orgIds: ReadonlySet<string>,
  needles: readonly SecretNeedle[],
  publication: Publication,
  recorded: (rel: string) => FileFacts | undefined = () => undefined,
): (rel: string, bytes: Buffer, parts?: AssembledParts) => Inspected {
  const byBytes = new WeakMap<Buffer, Inspected>();
  const knownItems = new WeakMap<Buffer, { schema: unknown; facts: ListItemFacts }>();

  /**
   * A list rewritten by a rebuild holds mostly the items its last audit
   * checked: an item with the hash of one it recorded is that item (the
   * facts are those of its bytes); any other is checked alone, as a list of
   * one. Then the list is assembled from known items, like a page. Whether
   * every item is now known.
   */
  const learnFromRecord = (rel: string, parts: AssembledParts, schema: unknown): boolean => {
    const before = recorded(rel)?.items;
    if (!before) return false;
    const byHash = new Map(before.map((item) => [item.hash, item]));
    const unknown: Buffer[] = [];
    for (const item of parts.items) {
      if (knownItems.get(item)?.schema === schema) continue;
      const facts = byHash.get(sha256(item));
      if (facts) knownItems.set(item, { schema, facts });
      else unknown.push(item);
    }
    // Checked one by one, many new items would cost more than the list checked whole.
    if (unknown.length > Math.max(MOST_CHECKED_ALONE, parts.items.length / 8)) return false;
    for (const item of unknown) {
      const facts = alone(rel, item, parts.tail);
      if (facts === undefined) return false;
      knownItems.set(item, { schema, facts });
    }
    return true;
  };
  const alone = (rel: string, item: Buffer, tail: string): ListItemFacts | undefined => {
    const found = inspectBytes(rel, assembledBytes([item], tail), orgIds, needles, publication);
    return found.problems.length === 0 && found.facts?.items?.length === 1 ? found.facts.items[0] : undefined;
  };

  const assembled = (rel: string, bytes: Buffer, parts: AssembledParts, schema: unknown): Inspected | undefined => {
    const items: ListItemFacts[] = [];
    for (const item of parts.items) {
      const known = knownItems.get(item);
      if (known === undefined || known.schema !== schema) return undefined;
      items.push(known.facts);
    }
    if (!isAssembledFrom(bytes, parts)) return undefined;
    const frame = inspectBytes(rel, assembledBytes([], parts.tail), orgIds, needles, publication);
    if (frame.problems.length > 0 || !frame.facts || scanForSecrets(rel, bytes, needles).length > 0) return undefined;
    return { problems: [], facts: { ...frame.facts, hash: sha256(bytes), items } };
  };

  const learnItems = (bytes: Buffer, parts: AssembledParts, schema: unknown, found: Inspected) => {
    const items = found.facts?.items;
    if (found.problems.length > 0 || items?.length !== parts.items.length || !isAssembledFrom(bytes, parts)) return;
    // An item's facts hash its span of the text: the same hash proves the span is this item's bytes.
    parts.items.forEach((item, i) => {
      if (items[i]!.hash === sha256(item)) knownItems.set(item, { schema, facts: items[i]! });
    });
  };

  return (rel, bytes, parts) => {
    const twin = byBytes.get(bytes);
    const route = routeOfFile(rel);
    if (twin?.facts && twin.problems.length === 0 && route && ROUTES[route.kind].shape === ROUTES[twin.facts.route.kind].shape) {
      return { problems: [], facts: { ...twin.facts, rel, route } };
    }
    const schema = parts && route ? itemSchemaOf(shapeIn(publication, ROUTES[route.kind].shape)) : undefined;
    if (parts && schema !== undefined) {
      const found = assembled(rel, bytes, parts, schema);
      if (found) return found;
      const fromRecord = learnFromRecord(rel, parts, schema) ? assembled(rel, bytes, parts, schema) : undefined;
      if (fromRecord) return fromRecord;
    }
    const result = inspectBytes(rel, bytes, orgIds, needles, publication);
    byBytes.set(bytes, result);
    if (parts && schema !== undefined) learnItems(bytes, parts, schema, result);
    return result;
  };
}
