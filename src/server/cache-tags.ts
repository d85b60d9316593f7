/**
 * `Cache-Tag` values (Cloudflare and Fastly purge by them): the entities a file
 * holds, so a CDN can purge every cached answer that shows one post, block or
 * category without knowing the paths. Lists carry their collection's tag only;
 * purge the collection with any of its items.
 */
import type { Route } from "../api-paths.js";

export function cacheTagsOf(route: Route, json: unknown): string {
  const org = route.orgId;
  const tags = [`org:${org}`];
  const item = json as { id?: string; categorySlug?: string | null };
  switch (route.kind) {
    case "block":
    case "blockBySlug":
      tags.push(`block:${org}/${item.id}`);
      break;
    case "content":
    case "contentBySlug":
      tags.push(`content:${org}/${item.id}`);
      if (item.categorySlug) tags.push(`category:${org}/${item.categorySlug}`);
      break;
    case "references":
      tags.push(`content:${org}/${route.id}`);
      break;
    case "blocks":
    case "contents":
    case "categories":
    case "organization":
      tags.push(`${route.kind}:${org}`);
      break;
    default:
      break;
  }
  return tags.join(",");
}
