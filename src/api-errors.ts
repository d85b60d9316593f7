/**
 * The HTTP errors of D5–D7 and D10, each a code, a message a person can act on,
 * and the status the route table gives the code.
 */
import { MAX_HEAD_BYTES, MAX_HEADER_FIELDS } from "./api-http.js";
import { CdsnapError, type ErrorDetail } from "./errors.js";
import { ERROR_STATUS, type ServerErrorCode } from "./route-table.js";

function apiError(code: ServerErrorCode, message: string, details?: ErrorDetail[], headers?: Record<string, string>): CdsnapError {
  return new CdsnapError(code, message, ERROR_STATUS[code], details, headers);
}

export const httpError = {
  unauthorized: () =>
    apiError("unauthorized", "a valid API key is required in the x-api-key header"),
  forbidden: () => apiError("forbidden", "this API key does not belong to the organization in the path"),
  insufficientScope: () =>
    apiError("insufficient_scope", "this API key can only read; writing needs a key with the write scope"),
  notFound: () => apiError("not_found", "nothing is published at this path"),
  methodNotAllowed: (allow: string) =>
    apiError("method_not_allowed", `this path answers ${allow} only`, undefined, { Allow: allow }),
  malformedJson: (why: string) => apiError("malformed_json", `the request body is not valid JSON: ${why}`),
  unsupportedMediaType: () =>
    apiError(
      "unsupported_media_type",
      "the request body must be JSON in UTF-8, sent as Content-Type: application/json (a charset parameter may only be utf-8)",
    ),
  payloadTooLarge: (limit: number) =>
    apiError("payload_too_large", `the request body is larger than ${limit} bytes`),
  validationFailed: (details: ErrorDetail[]) =>
    apiError("validation_failed", "the request body breaks the rules of this endpoint; see details", details),
  preconditionFailed: () =>
    apiError("precondition_failed", "the organization changed since the ETag in If-Match; fetch it again"),
  rateLimited: (retryAfterSeconds: number, what = "too many write requests for this API key") =>
    apiError("rate_limited", `${what}; retry in ${retryAfterSeconds} s`, undefined, {
      "Retry-After": String(retryAfterSeconds),
    }),
  expectationFailed: () =>
    apiError("expectation_failed", "the only Expect this server meets is 100-continue"),
  requestTimeout: () => apiError("request_timeout", "the request did not arrive in time; the connection was closed"),
  headersTooLarge: () =>
    apiError(
      "headers_too_large",
      `the request head is larger than the server accepts: at most ${MAX_HEADER_FIELDS} header fields, ` +
        `and ${MAX_HEAD_BYTES} bytes of request line and headers`,
    ),
  badRequest: (why = "the request is not well-formed HTTP") => apiError("bad_request", why),
  requestAborted: () => apiError("request_aborted", "the request body was not received in full"),
  internal: () => apiError("internal", "the server failed to answer; the error was logged"),
};
