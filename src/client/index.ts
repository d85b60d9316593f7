/**
 * `cdsnap/client`: the response types of interface.md and a typed client for
 * website frontends. Runs wherever `fetch` does (browsers, Node 20, workers);
 * bundled without zod or any Node module into dist/client.js.
 *
 * @example
 *   import { createClient, CdsnapApiError, type ContentSummary } from "cdsnap/client";
 *   const cms = createClient({ baseUrl: "https://cdn.example.com", apiKey: READ_KEY, orgId: "demo" });
 *   const posts: ContentSummary[] = (await cms.contents()).items;
 *
 *   // An incremental sync: keep each answer's ETag, send it back, fetch only what changed.
 *   const answer = await cms.withMeta.content(id, { ifNoneMatch: kept.get(id)?.etag });
 *   if (!answer.notModified) kept.set(id, { etag: answer.meta.etag, data: answer.data });
 */
export {
  createClient,
  isNotModified,
  type CdsnapClient,
  type CdsnapClientWithMeta,
  type Answer,
  type AnswerMeta,
  type AnswerResult,
  type Fresh,
  type NotModified,
  type ReadResult,
  type ClientOptions,
  type CallOptions,
  type BlocksOptions,
  type UpdateOptions,
  type WithEtag,
  type BusinessOfferInput,
  type BusinessDescriptionResponse,
  type BusinessOffersResponse,
  type FetchLike,
  type FetchInitLike,
  type FetchResponseLike,
} from "./create-client.js";
export { CdsnapApiError, type ApiErrorCode, type ApiErrorDetail, type CdsnapApiErrorInit } from "./errors.js";
export type {
  Block,
  BlockList,
  BusinessOffer,
  Category,
  CategoryList,
  ContentDetail,
  ContentList,
  ContentPage,
  ContentSummary,
  ErrorBody,
  Field,
  Organization,
  Reference,
} from "./api-types.js";
