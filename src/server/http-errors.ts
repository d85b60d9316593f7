/** The HTTP errors of D5–D7 and D10, each a code, a status and a message a person can act on. */
import { CdsnapError, type ErrorDetail } from "../errors.js";

export const httpError = {
  unauthorized: () =>
    new CdsnapError("unauthorized", "a valid API key is required in the x-api-key header", 401),
  forbidden: () => new CdsnapError("forbidden", "this API key does not belong to the organization in the path", 403),
  insufficientScope: () =>
    new CdsnapError("insufficient_scope", "this API key can only read; writing needs a key with the write scope", 403),
  notFound: () => new CdsnapError("not_found", "nothing is published at this path", 404),
  methodNotAllowed: (allow: string) =>
    new CdsnapError("method_not_allowed", `this path answers ${allow} only`, 405, undefined, { Allow: allow }),
  malformedJson: (why: string) => new CdsnapError("malformed_json", `the request body is not valid JSON: ${why}`, 400),
  unsupportedMediaType: () =>
    new CdsnapError("unsupported_media_type", "the request body must be sent as Content-Type: application/json", 415),
  payloadTooLarge: (limit: number) =>
    new CdsnapError("payload_too_large", `the request body is larger than ${limit} bytes`, 413),
  validationFailed: (details: ErrorDetail[]) =>
    new CdsnapError("validation_failed", "the request body breaks the rules of this endpoint; see details", 422, details),
  preconditionFailed: () =>
    new CdsnapError("precondition_failed", "the organization changed since the ETag in If-Match; fetch it again", 412),
  rateLimited: (retryAfterSeconds: number, what = "too many write requests for this API key") =>
    new CdsnapError("rate_limited", `${what}; retry in ${retryAfterSeconds} s`, 429, undefined, {
      "Retry-After": String(retryAfterSeconds),
    }),
  expectationFailed: () =>
    new CdsnapError("expectation_failed", "the only Expect this server meets is 100-continue", 417),
  requestTimeout: () => new CdsnapError("request_timeout", "the request did not arrive in time; the connection was closed", 408),
  headersTooLarge: () =>
    new CdsnapError("headers_too_large", "the request headers are larger than the server accepts", 431),
  badRequest: (why = "the request is not well-formed HTTP") => new CdsnapError("bad_request", why, 400),
  requestAborted: () => new CdsnapError("request_aborted", "the request body was not received in full", 400),
  internal: () => new CdsnapError("internal", "the server failed to answer; the error was logged", 500),
};
