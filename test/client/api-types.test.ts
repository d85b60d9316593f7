/**
 * The client's plain answer types (src/client/api-types.ts) are the shapes
 * the server holds every file to (model/api.ts's zod schemas), member for
 * member: `npm test` type-checks this file first, and a difference either way
 * (a member added, made optional, widened) fails it.
 */
import { expectTypeOf, it } from "vitest";
import type * as Client from "../../src/client/api-types.js";
import type * as Model from "../../src/model/api.js";

it("each answer type of the client is the type its zod schema infers", () => {
  expectTypeOf<Client.Field>().toEqualTypeOf<Model.Field>();
  expectTypeOf<Client.Block>().toEqualTypeOf<Model.Block>();
  expectTypeOf<Client.BlockList>().toEqualTypeOf<Model.BlockList>();
  expectTypeOf<Client.BusinessOffer>().toEqualTypeOf<Model.BusinessOffer>();
  expectTypeOf<Client.Organization>().toEqualTypeOf<Model.Organization>();
  expectTypeOf<Client.Reference>().toEqualTypeOf<Model.Reference>();
  expectTypeOf<Client.ContentSummary>().toEqualTypeOf<Model.ContentSummary>();
  expectTypeOf<Client.ContentList>().toEqualTypeOf<Model.ContentList>();
  expectTypeOf<Client.ContentPage>().toEqualTypeOf<Model.ContentPage>();
  expectTypeOf<Client.ContentDetail>().toEqualTypeOf<Model.ContentDetail>();
  expectTypeOf<Client.Category>().toEqualTypeOf<Model.Category>();
  expectTypeOf<Client.CategoryList>().toEqualTypeOf<Model.CategoryList>();
  expectTypeOf<Client.ErrorBody>().toEqualTypeOf<Model.ErrorBody>();
});
