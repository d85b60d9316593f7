/**
 * What the OpenAPI document says about each route of the route table, in
 * words. Kept apart from the table so the browser client, which bundles the
 * table, does not carry the prose.
 */
import { RESERVED_ID } from "../model/id-patterns.js";
import { MAX_BODY_BYTES, MAX_HEAD_BYTES, MAX_HEADER_FIELDS } from "../api-http.js";
import type { ParamName, RouteKind, ServerErrorCode } from "../route-table.js";

export interface RouteDocs {
  summary: string;
  description: string;
  /** What a 404 means here, besides a malformed path. */
  notFound: string;
  tag: "Blocks" | "Contents" | "Categories" | "Organization";
}

const NO_TREE = "the organization has no published tree yet";

export const ROUTE_DOCS: Record<RouteKind, RouteDocs> = {
  blocks: {
    tag: "Blocks",
    summary: "Published blocks, optionally of some pages",
    description:
      "Every published block of the organization in D2 order (position, then id). With `?pages=`, only the blocks " +
      "attached to any of the named pages, each once, in the same order (D8).",
    notFound: NO_TREE,
  },
  block: {
    tag: "Blocks",
    summary: "One published block by id",
    description: "The block with this id, the same object as its item in the block list.",
    notFound: "no published block has this id (a draft or archived block is not found either)",
  },
  blockBySlug: {
    tag: "Blocks",
    summary: "One published block by slug",
    description: "The published block whose slug this is; the same answer as by its id.",
    notFound: "no published block has this slug",
  },
  organization: {
    tag: "Organization",
    summary: "Organization metadata",
    description:
      "The organization's name, slug, public integration ids, business description and offers (D4). " +
      "Never a credential or any other secret. Its ETag is what `If-Match` on the two PATCHes compares.",
    notFound: NO_TREE,
  },
  businessDescription: {
    tag: "Organization",
    summary: "Replace the business description",
    description:
      "Stores the text (trimmed, CR LF folded to LF; `\"\"` clears it) and republishes the organization file " +
      "before answering. Needs a key with the `write` scope (D5); the rules of the text are D7's.",
    notFound: "the path's organization id is malformed",
  },
  businessOffers: {
    tag: "Organization",
    summary: "Replace the whole list of business offers",
    description:
      "Stores the list as sent, in its order (`[]` clears it), and republishes the organization file before " +
      "answering. Needs a key with the `write` scope (D5); the rules of an offer are D7's.",
    notFound: "the path's organization id is malformed",
  },
  contents: {
    tag: "Contents",
    summary: "Published contents, newest first",
    description:
      "A summary of every published post (no body), newest publish date first, then by slug (D2). " +
      "Filter by category on the client by `categorySlug`.",
    notFound: NO_TREE,
  },
  contentsPage: {
    tag: "Contents",
    summary: "One page of the published contents",
    description:
      "An exact slice of the contents list, newest first: page `n` holds its items `(n-1)*limit` up to `n*limit`. " +
      "`meta.pagination` gives the page, the page size of the build (`limit`), how many pages and items there are, " +
      "and the next and previous page numbers (null past either end). Page 1 always exists, empty when nothing is published.",
    notFound: `${NO_TREE}, or the page is past the last one (\`meta.pagination.pages\` of any page says how many there are)`,
  },
  content: {
    tag: "Contents",
    summary: "One published post by id",
    description: "The post's summary members plus its markdown body and references.",
    notFound: "no published post has this id (a draft, archived or scheduled post is not found either)",
  },
  contentBySlug: {
    tag: "Contents",
    summary: "One published post by slug",
    description: "The published post whose slug this is; the same answer as by its id.",
    notFound: "no published post has this slug",
  },
  references: {
    tag: "Contents",
    summary: "The references of a published post",
    description: "A bare array: the post's references, `[]` when it has none or carries them inline in its body (D3).",
    notFound: "no published post has this id",
  },
  categories: {
    tag: "Categories",
    summary: "Categories",
    description: "Every category of the organization in D2 order (position, then display value, then id).",
    notFound: NO_TREE,
  },
  categoryContentsPage: {
    tag: "Contents",
    summary: "One page of the published contents of a category",
    description:
      "The contents list filtered to the posts whose `categorySlug` is this category's, then cut into pages like " +
      "`/contents/page/{page}`. Every category of the categories list has a page 1, empty when none of its posts is published.",
    notFound: `${NO_TREE}, the organization has no category with this slug, or the page is past the last one`,
  },
};

export const PARAM_DOCS: Record<ParamName, string> = {
  orgId:
    "The organization's id: 1-128 characters of A-Z a-z 0-9 _ -, starting with a letter or digit (D9).",
  blockId:
    `A block's id, as the organization's id; \`${RESERVED_ID}\` is reserved and never an id (D9).`,
  contentId:
    `A post's id, as the organization's id; \`${RESERVED_ID}\` is reserved and never an id (D9).`,
  slug:
    "A slug: lowercase a-z 0-9 words joined by single hyphens, at most 200 characters (D9).",
  categorySlug: "A category's slug, as in the categories list: lowercase a-z 0-9 words joined by single hyphens.",
  page: "A page number from 1, written without a sign or leading zeros.",
};

export const QUERY_DOCS: Record<"pages", string> = {
  pages:
    "Comma-separated page names, or the parameter repeated: the blocks on any of them, each once, in D2 order. " +
    "Empty names are ignored; no name at all means no filter (D8).",
};

/** When each error is answered. `not_found` is said per route. */
export const ERROR_DOCS: Record<Exclude<ServerErrorCode, "not_found">, string> = {
  bad_request:
    "`bad_request`: the request is not well-formed HTTP (a malformed request line or header, no `Host` or two); " +
    "answered before any route is looked at. A request the HTTP parser cannot read also has its connection closed.",
  malformed_json: "`malformed_json`: the body is not strict UTF-8 JSON, or an object in it repeats a member name.",
  request_aborted: "`request_aborted`: the body stopped arriving before its end.",
  unauthorized: "`unauthorized`: the `x-api-key` header is missing, or names no key, or a revoked one (D5).",
  forbidden:
    "`forbidden`: the key belongs to another organization; the same answer whether or not the path's organization exists (D5).",
  insufficient_scope: "`insufficient_scope`: a key with the `read` scope only, on a PATCH (D5).",
  method_not_allowed: "`method_not_allowed`: the path does not answer this method; `Allow` lists the ones it does.",
  request_timeout:
    "`request_timeout`: the headers did not arrive within 10 s, or the whole request within 30 s; the connection is closed.",
  precondition_failed: "`precondition_failed`: `If-Match` named an ETag that is no longer the organization's.",
  payload_too_large: `\`payload_too_large\`: the body is over ${MAX_BODY_BYTES} bytes; a \`Content-Length\` over it is refused before the body is read.`,
  unsupported_media_type: "`unsupported_media_type`: `Content-Type` is not `application/json` (a `charset=utf-8` parameter is allowed).",
  expectation_failed: "`expectation_failed`: an `Expect` header other than `100-continue`.",
  validation_failed: "`validation_failed`: the JSON breaks a rule of D7; `details` names each member and the rule it breaks.",
  rate_limited:
    "`rate_limited`: more requests without a valid key from this client address than the server allows (default 30 a minute), " +
    "or, on a PATCH, more writes than the key's rate (default 60 a minute, D6). `Retry-After` says when to retry.",
  headers_too_large:
    `\`headers_too_large\`: more than ${MAX_HEADER_FIELDS} header fields, or a request head (request line, header fields and ` +
    `the empty line after them, as sent) over ${MAX_HEAD_BYTES} bytes; the connection is closed.`,
  internal: "`internal`: an unexpected failure; it is logged, and the answer never carries a stack trace.",
};
