/**
 * `@cdsnap/astro`: a cdsnap content API as Astro content collections.
 *
 * @example
 *   // src/content.config.ts
 *   import { defineCollection } from "astro:content";
 *   import { cdsnapPosts, cdsnapOrganization } from "@cdsnap/astro";
 *   const cms = { baseUrl: import.meta.env.CDSNAP_URL, apiKey: import.meta.env.CDSNAP_READ_KEY, orgId: import.meta.env.CDSNAP_ORG_ID };
 *   export const collections = {
 *     posts: defineCollection({ loader: cdsnapPosts(cms) }),
 *     organization: defineCollection({ loader: cdsnapOrganization(cms) }),
 *   };
 */
export {
  cdsnapBlocks,
  cdsnapCategories,
  cdsnapOrganization,
  cdsnapPosts,
  type CdsnapBlocksOptions,
  type CdsnapLoader,
  type CdsnapLoaderOptions,
  type CdsnapLoaderContext,
  type RenderedContent,
} from "./loaders.js";
export {
  cdsnapLiveOrganization,
  cdsnapLivePosts,
  cdsnapLivePostSummaries,
  type CacheHint,
  type CdsnapLiveLoader,
  type LiveCollection,
  type LiveEntry,
  type Plain,
  type PostFilter,
  type PostLookup,
} from "./live.js";
export {
  blockSchema,
  businessOfferSchema,
  categorySchema,
  contentDetailSchema,
  contentSummarySchema,
  fieldSchema,
  organizationSchema,
  referenceSchema,
} from "./schemas.js";
