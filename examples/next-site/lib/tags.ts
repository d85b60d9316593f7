/**
 * The Next.js cache tags of a read of the cdsnap API, named as cdsnap's
 * `--on-change` event names what a change made stale, so that
 * app/api/revalidate can expire exactly those reads.
 */

/** The item tag's prefix of each collection whose path names an item by its id (`…/contents/post-0011`). */
const ITEM_PREFIX: Record<string, string> = { blocks: "block", contents: "content" };

/**
 * The read's API path (an event lists the paths whose answer changed, without
 * the query string), `org:<id>` (what an `access` event names: who may read
 * the organization changed), and, when the path tells it, the tag the answer's
 * own `Cache-Tag` gives its collection or item (`contents:demo`,
 * `content:demo/post-0011`), so a purge that names tags only reaches these
 * reads too. A by-slug path does not name its item's id; its path tag is
 * enough, because an event lists a by-slug path whose answer changed.
 *
 * @example
 *   tagsOf("/api/organizations/demo/contents/post-0011/references")
 *   // ["/api/organizations/demo/contents/post-0011/references", "org:demo", "content:demo/post-0011"]
 */
export function tagsOf(apiPath: string): string[] {
  const match = /^\/api\/organizations\/([^/]+)\/([^/]+)(?:\/([^/]+))?/.exec(apiPath);
  if (!match) return [apiPath];
  const org = match[1]!;
  const collection = match[2]!;
  const id = match[3];
  const tags = [apiPath, `org:${org}`];
  const itemPrefix = ITEM_PREFIX[collection];
  if (id === undefined) tags.push(`${collection}:${org}`);
  else if (itemPrefix !== undefined && id !== "by-slug") tags.push(`${itemPrefix}:${org}/${id}`);
  return tags;
}
