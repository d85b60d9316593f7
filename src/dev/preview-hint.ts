/**
 * What `cdsnap dev --preview` prints once it serves: the commands that read
 * the preview. dev makes no key of its own in a database that is the
 * organization's, so the first line makes one with the preview scope; the
 * second reads the contents list with it, drafts and scheduled posts included.
 *
 * @example
 *   previewHint("http://127.0.0.1:8787", "/srv/acme.db", ["acme"]);
 *   // preview: a key with the preview scope reads drafts and scheduled posts at the same URLs:
 *   //   KEY=$(npx cdsnap keys create --db /srv/acme.db --org acme --scopes read,preview --label preview)
 *   //   curl -H "x-api-key: $KEY" http://127.0.0.1:8787/api/organizations/acme/contents
 */
import { pathOf } from "../api-paths.js";

/** Single-quoted for a POSIX shell when it holds anything a shell would read. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

export function previewHint(url: string, dbFile: string, orgIds: readonly string[]): string {
  const orgId = orgIds[0];
  if (orgId === undefined) return "preview: the database has no organization yet; add one, then make a key with --scopes read,preview";
  return [
    "preview: a key with the preview scope reads drafts and scheduled posts at the same URLs:",
    `  KEY=$(npx cdsnap keys create --db ${shellWord(dbFile)} --org ${shellWord(orgId)} --scopes read,preview --label preview)`,
    `  curl -H "x-api-key: $KEY" ${url}${pathOf({ kind: "contents", orgId })}`,
  ].join("\n");
}
