/**
 * The OpenAPI 3.1 document of interface.md with decisions D5–D11: every path,
 * its parameters, the x-api-key scheme, every response with its status, and
 * examples taken from a build of the demo organization.
 */
import { httpError } from "../server/http-errors.js";
import { CACHE_CONTROL } from "../server/static-route.js";
import { ALLOWED_HEADERS, ALLOWED_METHODS } from "../server/cors.js";
import type { CdsnapError } from "../errors.js";
import { componentSchemas } from "./json-schemas.js";

export interface DemoExamples {
  blockList: unknown;
  block: unknown;
  organization: unknown;
  contentList: unknown;
  contentDetail: unknown;
  references: unknown;
  categories: unknown;
  blockId: string;
  blockSlug: string;
  contentId: string;
  contentSlug: string;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function errorExample(error: CdsnapError) {
  return {
    value: {
      error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
    },
  };
}

function errorResponse(description: string, error: CdsnapError, headers?: Record<string, unknown>) {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { "application/json": { schema: ref("Error"), examples: { [error.code]: errorExample(error) } } },
  };
}

const commonHeaders = {
  Vary: { description: "Always `x-api-key, Origin` (D10).", schema: { type: "string" } },
  "Access-Control-Allow-Origin": {
    description: "`*`, or the request's Origin when the organization restricts origins (D11).",
    schema: { type: "string" },
  },
};
const cacheHeaders = {
  ...commonHeaders,
  ETag: { description: "Strong ETag: the SHA-256 of the body (D10).", schema: { type: "string" } },
  "Cache-Control": { description: `\`${CACHE_CONTROL}\``, schema: { type: "string" } },
};

function components() {
  return {
    securitySchemes: {
      apiKey: {
        type: "apiKey",
        in: "header",
        name: "x-api-key",
        description: "A key of the organization in the path. `read` keys can GET; `read write` keys can also PATCH (D5).",
      },
    },
    parameters: {
      orgId: { name: "orgId", in: "path", required: true, description: "Organization id.", schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$" } },
      blockId: { name: "blockId", in: "path", required: true, description: "Block id.", schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$" } },
      contentId: { name: "contentId", in: "path", required: true, description: "Content id.", schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$" } },
      slug: { name: "slug", in: "path", required: true, description: "Slug.", schema: { type: "string", pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$", maxLength: 200 } },
      ifNoneMatch: { name: "If-None-Match", in: "header", required: false, description: "An ETag from an earlier answer; 304 when unchanged.", schema: { type: "string" } },
      ifMatch: { name: "If-Match", in: "header", required: false, description: "The organization's current ETag; 412 when it changed since.", schema: { type: "string" } },
    },
    responses: {
      NotModified: { description: "Unchanged since the ETag in If-None-Match (D10).", headers: cacheHeaders },
      Unauthorized: errorResponse("Missing, unknown or revoked API key (D5).", httpError.unauthorized()),
      Forbidden: {
        description: "The key belongs to another organization (the same whether or not the path's organization exists), or a read-only key on a PATCH (D5).",
        content: {
          "application/json": {
            schema: ref("Error"),
            examples: {
              forbidden: errorExample(httpError.forbidden()),
              insufficient_scope: errorExample(httpError.insufficientScope()),
            },
          },
        },
      },
      NotFound: errorResponse("Unknown or unpublished item, or a path outside the interface (D6).", httpError.notFound()),
      MethodNotAllowed: errorResponse("The path does not answer this method; `Allow` lists those it does (D6).", httpError.methodNotAllowed("GET, HEAD, OPTIONS"), {
        Allow: { description: "The methods this path answers.", schema: { type: "string" } },
      }),
      MalformedJson: errorResponse("The body is not JSON (D6).", httpError.malformedJson("Unexpected token")),
      PayloadTooLarge: errorResponse("The body is over 64 KiB (D6).", httpError.payloadTooLarge(65536)),
      UnsupportedMediaType: errorResponse("The body is not application/json (D6).", httpError.unsupportedMediaType()),
      ValidationFailed: errorResponse(
        "The JSON breaks the rules of D7; `details` names each problem.",
        httpError.validationFailed([{ path: "businessOffers.0.link", message: "must be an absolute http: or https: URL without credentials" }]),
      ),
      PreconditionFailed: errorResponse("If-Match named an ETag that is no longer current.", httpError.preconditionFailed()),
      RateLimited: errorResponse(
        "More PATCH requests than this key's write rate (default 60 a minute, D6), or more requests without a valid key from this client address than the server allows (default 30 a minute).",
        httpError.rateLimited(12),
        { "Retry-After": { description: "Seconds to wait.", schema: { type: "integer" } } },
      ),
      Internal: errorResponse("An unexpected failure; never carries a stack trace.", httpError.internal()),
    },
    schemas: componentSchemas(),
  };
}

const errorRefs = (...names: string[]) =>
  Object.fromEntries(
    names.map((n) => {
      const status = {
        NotModified: "304",
        MalformedJson: "400",
        Unauthorized: "401",
        Forbidden: "403",
        NotFound: "404",
        MethodNotAllowed: "405",
        PreconditionFailed: "412",
        PayloadTooLarge: "413",
        UnsupportedMediaType: "415",
        ValidationFailed: "422",
        RateLimited: "429",
        Internal: "500",
      }[n]!;
      return [status, { $ref: `#/components/responses/${n}` }];
    }),
  );

function readOperation(id: string, summary: string, schema: string, example: unknown, extra: { parameters?: unknown[]; notFound?: boolean } = {}) {
  const ok = {
    description: summary,
    headers: cacheHeaders,
    content: { "application/json": { schema: ref(schema), examples: { demo: { value: example } } } },
  };
  const errors = errorRefs(
    "NotModified",
    "Unauthorized",
    "Forbidden",
    ...(extra.notFound ? ["NotFound"] : []),
    "MethodNotAllowed",
    "RateLimited",
    "Internal",
  );
  const parameters = [{ $ref: "#/components/parameters/ifNoneMatch" }, ...(extra.parameters ?? [])];
  return {
    get: { operationId: `get${id}`, summary, tags: [tagOf(id)], parameters, responses: { "200": ok, ...errors } },
    head: {
      operationId: `head${id}`,
      summary: `${summary} (headers only, D10)`,
      tags: [tagOf(id)],
      parameters,
      responses: { "200": { description: "As GET, without a body.", headers: cacheHeaders }, ...errors },
    },
    options: preflight(id, "GET, HEAD, OPTIONS"),
  };
}

function tagOf(id: string): string {
  if (id.startsWith("Block")) return "Blocks";
  if (id.startsWith("Content") || id === "References") return "Contents";
  if (id === "Categories") return "Categories";
  return "Organization";
}

function preflight(id: string, allow: string) {
  return {
    operationId: `preflight${id}`,
    summary: "CORS preflight (D11); needs no key",
    tags: [tagOf(id)],
    security: [],
    responses: {
      "204": {
        description: `Allowed: methods \`${ALLOWED_METHODS}\`, headers \`${ALLOWED_HEADERS}\`; no CORS headers for an origin the organization does not allow.`,
        headers: {
          Allow: { description: `\`${allow}\``, schema: { type: "string" } },
          "Access-Control-Allow-Methods": { schema: { type: "string" } },
          "Access-Control-Allow-Headers": { schema: { type: "string" } },
          ...commonHeaders,
        },
      },
      ...errorRefs("NotFound"),
    },
  };
}

function writeOperation(id: string, summary: string, body: string, response: string, example: unknown, responseExample: unknown) {
  return {
    patch: {
      operationId: `update${id}`,
      summary,
      tags: ["Organization"],
      parameters: [{ $ref: "#/components/parameters/ifMatch" }],
      requestBody: { required: true, content: { "application/json": { schema: ref(body), examples: { demo: { value: example } } } } },
      responses: {
        "200": {
          description: "The stored value (trimmed as D7 says).",
          headers: { ...commonHeaders, ETag: { description: "The organization's new ETag.", schema: { type: "string" } } },
          content: { "application/json": { schema: ref(response), examples: { demo: { value: responseExample } } } },
        },
        ...errorRefs(
          "MalformedJson",
          "Unauthorized",
          "Forbidden",
          "MethodNotAllowed",
          "PreconditionFailed",
          "PayloadTooLarge",
          "UnsupportedMediaType",
          "ValidationFailed",
          "RateLimited",
          "Internal",
        ),
      },
    },
    options: preflight(id, "PATCH, OPTIONS"),
  };
}

export function openApiDocument(ex: DemoExamples): Record<string, unknown> {
  const org = { $ref: "#/components/parameters/orgId" };
  const offers = (ex.organization as { businessOffers: unknown[] }).businessOffers;
  const description = (ex.organization as { businessDescription: string }).businessDescription;
  return {
    openapi: "3.1.0",
    info: {
      title: "cdsnap content API",
      version: "1.0.0",
      description:
        "An organization's website content as a static snapshot: blocks, contents, categories and organization metadata, published items only. Paths are unversioned; changes are additive (D13).",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "http://127.0.0.1:8787", description: "cdsnap serve (the demo)" }],
    security: [{ apiKey: [] }],
    tags: [
      { name: "Blocks", description: "Reusable page pieces; published only." },
      { name: "Contents", description: "Articles and posts; published only, newest first." },
      { name: "Categories", description: "The taxonomy of contents." },
      { name: "Organization", description: "Metadata and the two writable business attributes." },
    ],
    paths: {
      "/api/organizations/{orgId}/blocks": {
        parameters: [org],
        ...readOperation("Blocks", "Published blocks, optionally of some pages (D8)", "BlockList", ex.blockList, {
          parameters: [
            {
              name: "pages",
              in: "query",
              required: false,
              description: "Comma-separated page names (or the parameter repeated); blocks on any of them, each once, in D2 order. Empty: no filter.",
              schema: { type: "string" },
              example: "home,pricing",
            },
          ],
        }),
      },
      "/api/organizations/{orgId}/blocks/{blockId}": {
        parameters: [org, { $ref: "#/components/parameters/blockId" }],
        ...readOperation("Block", "One published block", "Block", ex.block, { notFound: true }),
      },
      "/api/organizations/{orgId}/blocks/by-slug/{slug}": {
        parameters: [org, { $ref: "#/components/parameters/slug" }],
        ...readOperation("BlockBySlug", "One published block by slug", "Block", ex.block, { notFound: true }),
      },
      "/api/organizations/{orgId}/organization": {
        parameters: [org],
        ...readOperation("Organization", "Organization metadata (D4)", "Organization", ex.organization),
      },
      "/api/organizations/{orgId}/business-description": {
        parameters: [org],
        ...writeOperation(
          "BusinessDescription",
          "Replace the business description",
          "BusinessDescriptionBody",
          "BusinessDescriptionResponse",
          { businessDescription: description },
          { businessDescription: description },
        ),
      },
      "/api/organizations/{orgId}/business-offers": {
        parameters: [org],
        ...writeOperation(
          "BusinessOffers",
          "Replace the whole list of business offers ([] clears)",
          "BusinessOffersBody",
          "BusinessOffersResponse",
          { businessOffers: offers },
          { businessOffers: offers },
        ),
      },
      "/api/organizations/{orgId}/contents": {
        parameters: [org],
        ...readOperation("Contents", "Published contents, newest first", "ContentList", ex.contentList),
      },
      "/api/organizations/{orgId}/contents/{contentId}": {
        parameters: [org, { $ref: "#/components/parameters/contentId" }],
        ...readOperation("Content", "One published content item", "ContentDetail", ex.contentDetail, { notFound: true }),
      },
      "/api/organizations/{orgId}/contents/by-slug/{slug}": {
        parameters: [org, { $ref: "#/components/parameters/slug" }],
        ...readOperation("ContentBySlug", "One published content item by slug", "ContentDetail", ex.contentDetail, { notFound: true }),
      },
      "/api/organizations/{orgId}/contents/{contentId}/references": {
        parameters: [org, { $ref: "#/components/parameters/contentId" }],
        ...readOperation("References", "The references of a content item ([] when null)", "ReferenceList", ex.references, { notFound: true }),
      },
      "/api/organizations/{orgId}/categories": {
        parameters: [org],
        ...readOperation("Categories", "Categories (D2 order)", "CategoryList", ex.categories),
      },
    },
    components: components(),
  };
}
