/**
 * The OpenAPI 3.1 document of the API, derived from the route table: every
 * path and its parameters with their patterns, every operation with every
 * status it can answer (the D6 body on each error, no body on HEAD), the
 * request bodies as the write proxy checks them, and examples taken from a
 * build of the demo organization.
 */
import { httpError } from "../api-errors.js";
import {
  ALLOWED_HEADERS,
  ALLOWED_METHODS,
  CACHE_CONTROL,
  EXPOSED_HEADERS,
  FILE_VARY,
  NO_STORE,
  PREFLIGHT_CACHE_CONTROL,
  PREFLIGHT_MAX_AGE,
  PREVIEW_CACHE_CONTROL,
  VARY,
} from "../api-http.js";
import { shapeIn, type ShapeName } from "../model/shapes.js";
import { CODINGS, MIN_COMPRESSED_BYTES } from "../content-coding.js";
import type { CdsnapError } from "../errors.js";
import {
  ERROR_STATUS,
  OPERATIONS,
  PARAMS,
  ROUTES,
  ROUTE_KINDS,
  methodsOf,
  type Method,
  type ParamName,
  type RouteKind,
  type ServerErrorCode,
} from "../route-table.js";
import { componentSchemas } from "./json-schemas.js";
import { ERROR_DOCS, PARAM_DOCS, QUERY_DOCS, ROUTE_DOCS } from "./route-docs.js";

/** The demo's answer for each route: a file of the built tree, or for a PATCH the body (which it answers back). */
export type DemoExamples = Record<RouteKind, unknown>;

type Json = Record<string, unknown>;

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const pascal = (s: string) => s.replace(/(?:^|_)([a-z])/g, (_, c: string) => c.toUpperCase());
/** A name for a set of codes: `ForbiddenOrInsufficientScope`. */
const listName = (codes: readonly ServerErrorCode[]) => codes.map(pascal).join("Or");
const kindName = (kind: RouteKind) => kind[0]!.toUpperCase() + kind.slice(1);

/** One example error per code, built as the server builds it. */
const EXAMPLE_ERRORS: Record<ServerErrorCode, CdsnapError> = {
  bad_request: httpError.badRequest(),
  malformed_json: httpError.malformedJson("Unexpected token '}', \"{\"a\":}\" is not valid JSON"),
  request_aborted: httpError.requestAborted(),
  unauthorized: httpError.unauthorized(),
  forbidden: httpError.forbidden(),
  insufficient_scope: httpError.insufficientScope(),
  not_found: httpError.notFound(),
  method_not_allowed: httpError.methodNotAllowed("GET, HEAD, OPTIONS"),
  request_timeout: httpError.requestTimeout(),
  precondition_failed: httpError.preconditionFailed(),
  payload_too_large: httpError.payloadTooLarge(65536),
  unsupported_media_type: httpError.unsupportedMediaType(),
  expectation_failed: httpError.expectationFailed(),
  validation_failed: httpError.validationFailed([
    { path: "businessOffers.0.link", message: "must be an absolute http: or https: URL without credentials" },
  ]),
  rate_limited: httpError.rateLimited(12),
  headers_too_large: httpError.headersTooLarge(),
  internal: httpError.internal(),
};

// Answers the HTTP parser itself refuses are written before any route is known: no CORS, no Vary.
const BEFORE_ROUTING: ReadonlySet<ServerErrorCode> = new Set(["bad_request", "request_timeout", "headers_too_large"]);

const header = (description: string, schema: Json, required = false) => ({ description, required, schema });

const HEADERS = {
  vary: header(`Always \`${VARY}\`: answers differ by key and by origin (D10, D11).`, { const: VARY }, true),
  fileVary: header(
    `Always \`${FILE_VARY}\`: answers differ by key, by origin (D10, D11) and by the codings the request accepts.`,
    { const: FILE_VARY },
    true,
  ),
  allowOrigin: header("`*`, or the request's `Origin` when the organization lists it; absent for an origin it does not list (D11).", {
    type: "string",
  }),
  exposeHeaders: header("The headers a browser script may read; sent with `Access-Control-Allow-Origin`.", { const: EXPOSED_HEADERS }),
  etag: header("Strong ETag: the SHA-256 of the body, in hex (D10).", { type: "string", pattern: '^"[0-9a-f]{64}"$' }, true),
  fileEtag: header(
    "Strong ETag (D10): the SHA-256 of the file in hex, and for a compressed answer its coding after a dash " +
      `(${CODINGS.map((c) => `\`"<sha>-${c}"\``).join(", ")}). Any of a file's ETags in \`If-None-Match\` answers 304, ` +
      "and any of the organization's in `If-Match` passes.",
    { type: "string", pattern: `^"[0-9a-f]{64}(?:-(?:${CODINGS.join("|")}))?"$` },
    true,
  ),
  contentEncoding: header(
    `\`${CODINGS.join("` or `")}\` when \`Accept-Encoding\` accepts it (q-values honoured, \`br\` preferred on a tie) and the ` +
      `file has ${MIN_COMPRESSED_BYTES} bytes or more; absent when the body is the file as it is. \`Content-Length\` is the ` +
      "length of the compressed body.",
    { enum: [...CODINGS] },
  ),
  cacheControl: header(
    `\`${CACHE_CONTROL}\` (D10); \`${PREVIEW_CACHE_CONTROL}\` on every answer to a key with the \`preview\` scope, which may ` +
      "show a draft: no shared cache keeps it.",
    { enum: [CACHE_CONTROL, PREVIEW_CACHE_CONTROL] },
    true,
  ),
  cacheTag: {
    ...header(
      "The entities the answer shows (`org:…`, `block:…`, `content:…`, `category:…`, or the collection): a CDN purges by them. " +
        `Present exactly when \`Cache-Control\` is \`${CACHE_CONTROL}\` (\`x-present-with-cache-control\`): absent from an ` +
        "answer to a key with the `preview` scope, which no cache keeps.",
      { type: "string", pattern: "^org:[^,]+(?:,[^,]+)*$" },
    ),
    // OpenAPI cannot tie one header to another's value; this extension states it for tools and tests.
    "x-present-with-cache-control": CACHE_CONTROL,
  },
  lastModified: header("When the file was written.", { type: "string" }, true),
  acceptRanges: header("`none`: the answer is always the whole document.", { const: "none" }, true),
  noStore: header(`\`${NO_STORE}\`: nothing of this answer is cached.`, { const: NO_STORE }, true),
  retryAfter: header("Seconds to wait before retrying.", { type: "integer", minimum: 1 }, true),
};

const CORS = { "Access-Control-Allow-Origin": HEADERS.allowOrigin, "Access-Control-Expose-Headers": HEADERS.exposeHeaders };

function fileHeaders(full: boolean): Json {
  return {
    ETag: HEADERS.fileEtag,
    "Cache-Control": HEADERS.cacheControl,
    "Cache-Tag": HEADERS.cacheTag,
    Vary: HEADERS.fileVary,
    ...(full
      ? { "Content-Encoding": HEADERS.contentEncoding, "Last-Modified": HEADERS.lastModified, "Accept-Ranges": HEADERS.acceptRanges }
      : {}),
    ...CORS,
  };
}

function errorExample(error: CdsnapError) {
  const { code, message, details } = error;
  return { value: { error: { code, message, ...(details ? { details } : {}) } } };
}

/**
 * The answer of one status of an operation: the codes it can carry, each
 * described and shown, and the D6 body narrowed to those codes. An answer to
 * HEAD has the same status and headers and no body.
 */
function errorResponse(codes: readonly ServerErrorCode[], head: boolean, notFound?: string): Json {
  const lines = codes.map((code) =>
    code === "not_found"
      ? `\`not_found\`: ${notFound ?? "nothing is published at this path"}, or a path parameter breaks its pattern.`
      : ERROR_DOCS[code],
  );
  const headers: Json = { "Cache-Control": HEADERS.noStore };
  if (!codes.some((c) => BEFORE_ROUTING.has(c))) Object.assign(headers, { Vary: HEADERS.vary, ...CORS });
  if (codes.includes("rate_limited")) headers["Retry-After"] = HEADERS.retryAfter;
  const response: Json = { description: lines.join("\n\n"), headers };
  if (head) return response;
  response.content = {
    "application/json": {
      schema: schemaRef(`Error${listName(codes)}`),
      examples: Object.fromEntries(codes.map((code) => [code, errorExample(EXAMPLE_ERRORS[code])])),
    },
  };
  return response;
}

/** The 405 of a path, with its `Allow`. The key check comes first, so a request without a valid key gets 401 instead. */
function methodNotAllowed(allow: string, base: ErrorSchema): Json {
  const response = errorResponse(["method_not_allowed"], false);
  // Inline: a linter does not count a reference from an extension as a use.
  (response.content as Record<string, Json>)["application/json"]!.schema = narrowedError(base, ["method_not_allowed"]);
  (response.headers as Json).Allow = header("The methods this path answers.", { const: allow }, true);
  return response;
}

/** The codes of an operation grouped by status, in status order, each group sorted. */
function byStatus(codes: readonly ServerErrorCode[]): [number, ServerErrorCode[]][] {
  const groups = new Map<number, ServerErrorCode[]>();
  for (const code of codes) groups.set(ERROR_STATUS[code], [...(groups.get(ERROR_STATUS[code]) ?? []), code]);
  return [...groups].sort((a, b) => a[0] - b[0]).map(([status, set]) => [status, set.sort()]);
}

/** The error answers of an operation, one per status, shared through components where routes agree. */
function errorResponses(kind: RouteKind, method: Method, shared: Map<string, Json>): Json {
  const codes = (OPERATIONS[ROUTES[kind].access] as Record<string, readonly ServerErrorCode[]>)[method]!;
  const head = method === "HEAD";
  const out: Json = {};
  for (const [status, list] of byStatus(codes)) {
    if (list.includes("not_found")) {
      out[status] = errorResponse(list, head, ROUTE_DOCS[kind].notFound);
      continue;
    }
    const name = listName(list) + (head ? "Head" : "");
    if (!shared.has(name)) shared.set(name, errorResponse(list, head));
    out[status] = { $ref: `#/components/responses/${name}` };
  }
  return out;
}

/**
 * The body of a file answer: the route's shape, or for a post's files either
 * it or its preview shape (the same with the post's `status`), which only a
 * key with the `preview` scope is answered with. `anyOf`, not `oneOf`: an empty
 * list is both.
 */
function fileSchema(shape: ShapeName): Json {
  const preview = shapeIn("preview", shape);
  return preview === shape ? schemaRef(shape) : { anyOf: [schemaRef(shape), schemaRef(preview)] };
}

function readOperations(kind: RouteKind, example: unknown, shared: Map<string, Json>): Json {
  const docs = ROUTE_DOCS[kind];
  const route = ROUTES[kind];
  const parameters: unknown[] = [{ $ref: "#/components/parameters/ifNoneMatch" }, { $ref: "#/components/parameters/acceptEncoding" }];
  if ("query" in route) for (const name of route.query) parameters.push({ $ref: `#/components/parameters/${name}` });
  const notModified = {
    description:
      "Unchanged since an ETag in `If-None-Match` (D10), of any coding of the file; no body. `ETag` is the one a 200 " +
      "to this request would carry.",
    headers: fileHeaders(false),
  };
  return {
    get: {
      operationId: `get${kindName(kind)}`,
      summary: docs.summary,
      description: docs.description,
      tags: [docs.tag],
      parameters,
      responses: {
        "200": {
          description: docs.summary,
          headers: fileHeaders(true),
          content: { "application/json": { schema: fileSchema(route.shape), examples: { demo: { value: example } } } },
        },
        "304": notModified,
        ...errorResponses(kind, "GET", shared),
      },
    },
    head: {
      operationId: `head${kindName(kind)}`,
      summary: `${docs.summary}: headers only`,
      description:
        "The same status and headers as GET, with no body; `Content-Length` is the length of the body GET would send (D10).",
      tags: [docs.tag],
      parameters,
      responses: {
        "200": { description: "As GET, without the body.", headers: fileHeaders(true) },
        "304": notModified,
        ...errorResponses(kind, "HEAD", shared),
      },
    },
  };
}

function writeOperation(kind: RouteKind, body: unknown, shared: Map<string, Json>): Json {
  const docs = ROUTE_DOCS[kind];
  const route = ROUTES[kind];
  if (!("body" in route)) throw new Error(`${kind} is a write route without a body shape`);
  return {
    patch: {
      operationId: `update${kindName(kind)}`,
      summary: docs.summary,
      description: docs.description,
      tags: [docs.tag],
      parameters: [{ $ref: "#/components/parameters/ifMatch" }],
      requestBody: {
        required: true,
        content: { "application/json": { schema: schemaRef(route.body), examples: { demo: { value: body } } } },
      },
      responses: {
        "200": {
          description: "The stored value: trimmed, CR LF folded to LF, links that were null left out (D7).",
          headers: {
            ETag: { ...HEADERS.etag, required: false, description: "The organization's new ETag, for the next `If-Match`." },
            "Cache-Control": HEADERS.noStore,
            Vary: HEADERS.vary,
            ...CORS,
          },
          content: { "application/json": { schema: schemaRef(route.shape), examples: { demo: { value: body } } } },
        },
        ...errorResponses(kind, "PATCH", shared),
      },
    },
  };
}

function preflight(kind: RouteKind, shared: Map<string, Json>): Json {
  const docs = ROUTE_DOCS[kind];
  const allow = methodsOf(kind).join(", ");
  return {
    options: {
      operationId: `preflight${kindName(kind)}`,
      summary: "CORS preflight",
      description:
        "Answers a browser's preflight without a key (D11). For an origin the organization does not list, the answer " +
        "carries no `Access-Control-*` header, which the browser takes as a refusal.",
      tags: [docs.tag],
      security: [],
      responses: {
        "204": {
          description: `Allowed: methods \`${ALLOWED_METHODS}\`, request headers \`${ALLOWED_HEADERS}\`, kept by the browser for ${PREFLIGHT_MAX_AGE} s.`,
          headers: {
            Allow: header("The methods this path answers.", { const: allow }, true),
            Vary: HEADERS.vary,
            "Access-Control-Allow-Origin": HEADERS.allowOrigin,
            "Access-Control-Allow-Methods": header("The methods a browser may use.", { const: ALLOWED_METHODS }),
            "Access-Control-Allow-Headers": header("The request headers a browser may send.", { const: ALLOWED_HEADERS }),
            "Access-Control-Max-Age": header("Seconds a browser may keep this answer.", { const: PREFLIGHT_MAX_AGE }),
            "Access-Control-Expose-Headers": HEADERS.exposeHeaders,
            "Cache-Control": header("A cache may keep the answer as long as a browser does, per path and `Origin`.", { const: PREFLIGHT_CACHE_CONTROL }, true),
            "Cache-Tag": header("The organization's tag (`org:<id>`): a change of its allowed origins purges it.", { type: "string", pattern: "^org:" }, true),
          },
        },
        ...errorResponses(kind, "OPTIONS", shared),
      },
    },
  };
}

/**
 * The D6 body once per set of codes an answer can carry: `code` is one of
 * them, and `details` only comes with `validation_failed`.
 */
type ErrorSchema = { properties: { error: { properties: Json } } };

/** The D6 body narrowed to some codes: `code` is one of them, and `details` only comes with `validation_failed`. */
function narrowedError(base: ErrorSchema, codes: readonly ServerErrorCode[]): Json {
  const error = structuredClone(base.properties.error);
  error.properties.code = codes.length === 1 ? { const: codes[0] } : { enum: [...codes] };
  if (!codes.includes("validation_failed")) delete error.properties.details;
  return { ...structuredClone(base), properties: { error }, description: `The D6 body of ${codes.map((c) => `\`${c}\``).join(" or ")}.` };
}

/** The D6 body once per set of codes an operation's status can carry. */
function withNarrowedErrors(schemas: Record<string, Json>): Record<string, Json> {
  // Every answer names its narrowed body, so the general one is left to schemas/Error.schema.json.
  const { Error: base, ...out } = schemas as Record<string, Json> & { Error: ErrorSchema };
  const sets = new Map<string, ServerErrorCode[]>();
  for (const access of Object.values(OPERATIONS)) {
    for (const codes of Object.values(access) as (readonly ServerErrorCode[])[]) {
      for (const [, set] of byStatus(codes)) sets.set(listName(set), set);
    }
  }
  for (const [name, codes] of [...sets].sort(([a], [b]) => (a < b ? -1 : 1))) out[`Error${name}`] = narrowedError(base, codes);
  return out;
}

function parameterComponents(): Json {
  const out: Json = {};
  for (const name of Object.keys(PARAMS) as ParamName[]) {
    const spec: { pattern: RegExp; maxLength?: number; reserved?: string } = PARAMS[name];
    out[name] = {
      name,
      in: "path",
      required: true,
      description: PARAM_DOCS[name],
      schema: {
        type: "string",
        pattern: spec.pattern.source,
        ...(spec.maxLength !== undefined ? { maxLength: spec.maxLength } : {}),
        ...(spec.reserved !== undefined ? { not: { const: spec.reserved } } : {}),
      },
    };
  }
  out.pages = { name: "pages", in: "query", required: false, description: QUERY_DOCS.pages, schema: { type: "string" }, example: "home,pricing" };
  out.ifNoneMatch = {
    name: "If-None-Match",
    in: "header",
    required: false,
    description: "ETags from earlier answers (or `*`); 304 when one is current, whatever its coding.",
    schema: { type: "string" },
  };
  out.acceptEncoding = {
    name: "Accept-Encoding",
    in: "header",
    required: false,
    description:
      `The codings the client can decode (RFC 9110 §12.5.3). \`${CODINGS.join("` and `")}\` are offered, \`br\` first on ` +
      "equal q-values; `q=0` refuses one. Without the header, or when nothing offered is accepted, the file goes as it is.",
    schema: { type: "string" },
    example: "gzip, deflate, br",
  };
  out.ifMatch = {
    name: "If-Match",
    in: "header",
    required: false,
    description: "The organization's ETag as last read, of any coding (or `*`); 412 when it changed since.",
    schema: { type: "string" },
  };
  return out;
}

export function openApiDocument(examples: DemoExamples): Json {
  const shared = new Map<string, Json>();
  const schemas = componentSchemas();
  const paths: Json = {};
  for (const kind of ROUTE_KINDS) {
    const route = ROUTES[kind];
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ $ref: `#/components/parameters/${m[1]}` }));
    const allow = methodsOf(kind).join(", ");
    const operations =
      route.access === "write" ? writeOperation(kind, examples[kind], shared) : readOperations(kind, examples[kind], shared);
    paths[route.path] = {
      description: `Answers ${allow}. Any other method: 405 \`method_not_allowed\`, with \`Allow: ${allow}\` (\`x-method-not-allowed\`).`,
      parameters: params,
      ...operations,
      ...preflight(kind, shared),
      // OpenAPI has no place for the answer to a method a path lacks; this extension states it for tools and tests.
      "x-method-not-allowed": methodNotAllowed(allow, schemas.Error as ErrorSchema),
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "cdsnap content API",
      version: "1.0.0",
      description:
        "An organization's website content as a static snapshot: blocks, contents, categories and organization " +
        "metadata, published items only. Every error answer has the body `{ error: { code, message, details? } }` (D6). " +
        "Paths are unversioned; changes are additive (D13).",
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
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description:
            "A key of the organization in the path. `read` keys can GET; `read write` keys can also PATCH (D5). A key with the " +
            "`preview` scope (`read preview`, `read write preview`) reads the same paths from the preview tree, where " +
            "`build --preview` made one: drafts and scheduled posts too, each with its `status`, every answer `private, no-store`.",
        },
      },
      parameters: parameterComponents(),
      responses: Object.fromEntries([...shared].sort(([a], [b]) => (a < b ? -1 : 1))),
      schemas: withNarrowedErrors(schemas),
    },
  };
}
