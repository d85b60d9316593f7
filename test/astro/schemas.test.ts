/**
 * @cdsnap/astro's zod schemas (packages/astro/src/schemas.ts) infer exactly
 * the client's answer types (src/client/api-types.ts), which are the server's
 * own (test/client/api-types.test.ts): a collection's entries are typed as the
 * API answers them. `npm test` type-checks this file first, with zod 4's zod/v3
 * standing for Astro 5's zod 3 (tsconfig.json's paths); test/e2e/astro.test.ts
 * checks the same equalities against the packed package and the real Astro.
 */
import type { z } from "astro/zod";
import { expectTypeOf, it } from "vitest";
import type * as Client from "../../src/client/api-types.js";
import type * as Schemas from "../../packages/astro/src/schemas.js";

it("each schema of @cdsnap/astro infers the client's type of the same answer", () => {
  expectTypeOf<z.infer<typeof Schemas.fieldSchema>>().toEqualTypeOf<Client.Field>();
  expectTypeOf<z.infer<typeof Schemas.blockSchema>>().toEqualTypeOf<Client.Block>();
  expectTypeOf<z.infer<typeof Schemas.businessOfferSchema>>().toEqualTypeOf<Client.BusinessOffer>();
  expectTypeOf<z.infer<typeof Schemas.organizationSchema>>().toEqualTypeOf<Client.Organization>();
  expectTypeOf<z.infer<typeof Schemas.referenceSchema>>().toEqualTypeOf<Client.Reference>();
  expectTypeOf<z.infer<typeof Schemas.contentSummarySchema>>().toEqualTypeOf<Client.ContentSummary>();
  expectTypeOf<z.infer<typeof Schemas.contentDetailSchema>>().toEqualTypeOf<Client.ContentDetail>();
  expectTypeOf<z.infer<typeof Schemas.categorySchema>>().toEqualTypeOf<Client.Category>();
});
