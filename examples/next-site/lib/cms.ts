/**
 * The cdsnap API as the pages read it: @cdsnap/client over Next's fetch, every
 * read kept in Next's data cache under the tags of lib/tags.ts. Pages built
 * from these reads stay static until app/api/revalidate expires a tag.
 */
import { createClient, type FetchLike } from "@cdsnap/client";
import { tagsOf } from "./tags";

/**
 * How long a read is kept when no event expires it. Events do the real work;
 * this bounds a change whose event never arrived (cdsnap does not retry a
 * failed `--on-change` run).
 */
const BACKSTOP_SECONDS = 3600;

/**
 * Next's fetch, with each GET kept and tagged. A call that sets `cache` itself
 * (`organizationWithEtag` asks to revalidate: it needs the current ETag) and
 * every PATCH pass through as they came.
 */
const taggedFetch: FetchLike = (url, init) => {
  if (init.method !== "GET" || init.cache !== undefined) return fetch(url, init);
  return fetch(url, { ...init, next: { revalidate: BACKSTOP_SECONDS, tags: tagsOf(new URL(url).pathname) } });
};

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: copy .env.example to .env.local and fill it in`);
  return value;
}

export const cms = createClient({
  baseUrl: setting("CMS_URL"),
  apiKey: setting("CMS_READ_KEY"),
  orgId: setting("CMS_ORG"),
  fetch: taggedFetch,
});
