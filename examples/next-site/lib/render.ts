/**
 * A post's markdown body as HTML safe to put in a page. marked, the markdown
 * parser cdsnap's build uses too, makes the HTML: `[N]` markers become links to
 * the post's N-th reference, `post:` links point at this site's post route.
 * Then all of it, raw HTML written in the markdown and the links made here
 * alike, is parsed with parse5 (the HTML standard's parser, so the tree that
 * is cleaned is the one a browser builds from the same bytes), cut down to
 * GitHub's allowlist of elements, attributes and URL schemes by
 * hast-util-sanitize, and written back out. On the server, without a DOM.
 */
import type { Reference } from "@cdsnap/client";
import { fromHtml } from "hast-util-from-html";
import { defaultSchema, sanitize, type Schema } from "hast-util-sanitize";
import { toHtml } from "hast-util-to-html";
import { Marked, type TokenizerAndRendererExtension } from "marked";

/** Where app/blog/[slug] serves a post; the demo's posts link to each other there too. */
export const POST_PATH = "/blog/";

/** The id of the N-th entry of a post's reference list (counted from 1), where its `[N]` markers link. */
export const referenceId = (n: number) => `ref-${n}`;

/**
 * GitHub's schema. It already prefixes a body's ids and names (`user-content-`),
 * so they cannot clobber the page's elements. Elements whose content is code or
 * raw text, not prose, go with their content instead of leaving it as text.
 */
const SCHEMA: Schema = {
  ...defaultSchema,
  strip: [...(defaultSchema.strip ?? []), "style", "iframe", "noscript", "template", "textarea", "title", "xmp"],
};

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * `[N]` as cdsnap's `check` reads a marker (not escaped, not the text of an
 * inline link `[1](…)`), in prose only: marked never hands code to an inline
 * tokenizer. An N the post has no reference for is left to marked, as text.
 */
function citations(references: readonly Reference[]): TokenizerAndRendererExtension {
  return {
    name: "citation",
    level: "inline",
    start: (src) => src.match(/\[\d/)?.index,
    tokenizer(src) {
      // A marker inside a link's text would make a link inside a link.
      if (this.lexer.state.inLink) return undefined;
      const match = /^\[(\d{1,6})\](?!\()/.exec(src);
      if (!match) return undefined;
      const n = Number(match[1]);
      if (references[n - 1] === undefined) return undefined;
      return { type: "citation", raw: match[0], n };
    },
    renderer(token) {
      const n = token.n as number;
      return `<sup><a href="#${referenceId(n)}" title="${escapeHtml(references[n - 1]!.source)}">[${n}]</a></sup>`;
    },
  };
}

/**
 * @example
 *   renderBody("Mostly water [1]. <script>alert(1)</script>", [{ source: "Lab", url: "https://lab.example/" }])
 *   // '<p>Mostly water <sup><a href="#ref-1" title="Lab">[1]</a></sup>. </p>\n'
 */
export function renderBody(markdown: string, references: readonly Reference[] | null): string {
  const marked = new Marked({
    gfm: true,
    extensions: [citations(references ?? [])],
    walkTokens(token) {
      if (token.type === "link" && token.href.startsWith("post:")) token.href = POST_PATH + token.href.slice("post:".length);
    },
  });
  return toHtml(sanitize(fromHtml(marked.parse(markdown, { async: false }), { fragment: true }), SCHEMA));
}
