/**
 * Rules that span several sources of one organization: unique post ids and
 * slugs (drafts included, D9), categories that exist, unique slugs of blocks and
 * categories (the database has the constraint, but the build does not trust a
 * database it did not migrate).
 */
import type { Problem } from "../errors.js";
import type { OrgSnapshot, PostHead } from "../model/snapshot.js";

function duplicates<T>(items: readonly T[], keyOf: (item: T) => string, report: (item: T, first: T) => void): void {
  const seen = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    const first = seen.get(key);
    if (first === undefined) seen.set(key, item);
    else report(item, first);
  }
}

/** `file:line` of a front matter key, or the file alone when the line is unknown. */
function at(post: PostHead, key: string): string {
  const line = post.lines?.[key];
  return line === undefined ? post.file : `${post.file}:${line}`;
}

export function crossCheck(org: OrgSnapshot, posts: readonly PostHead[]): Problem[] {
  const problems: Problem[] = [];
  duplicates(
    posts,
    (p) => p.meta.id,
    (p, first) => problems.push({ where: at(p, "id"), message: `id: "${p.meta.id}" is also used by ${at(first, "id")}` }),
  );
  duplicates(
    posts,
    (p) => p.meta.slug,
    (p, first) =>
      problems.push({ where: at(p, "slug"), message: `slug: "${p.meta.slug}" is also used by ${at(first, "slug")}` }),
  );
  const categorySlugs = new Set(org.categories.map((c) => c.slug));
  const known =
    categorySlugs.size === 0
      ? "it has no categories yet"
      : `its categories are: ${[...categorySlugs].sort().join(", ")}`;
  for (const post of posts) {
    const category = post.meta.category;
    if (category !== undefined && !categorySlugs.has(category)) {
      problems.push({
        where: at(post, "category"),
        message: `category: "${category}" is not a category of organization ${org.id}; ${known}`,
      });
    }
  }
  duplicates(
    org.blocks,
    (b) => b.slug,
    (b, first) =>
      problems.push({ where: `blocks[org_id=${org.id} id=${b.id}]`, message: `slug: "${b.slug}" is also used by block ${first.id}` }),
  );
  duplicates(
    org.categories,
    (c) => c.slug,
    (c, first) =>
      problems.push({
        where: `categories[org_id=${org.id} id=${c.id}]`,
        message: `slug: "${c.slug}" is also used by category ${first.id}`,
      }),
  );
  return problems;
}
