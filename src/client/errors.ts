/**
 * The one error the client throws: every failed call, whether the server
 * answered with a D6 error body, answered something that is not one, or could
 * not be reached, becomes a CdsnapApiError with a `status` and a stable `code`.
 */
import type { ErrorBody } from "./api-types.js";
import type { ServerErrorCode } from "../route-table.js";

/** One problem of a `422 validation_failed`, e.g. `{ path: "businessOffers.0.link", message: "…" }`. */
export type ApiErrorDetail = NonNullable<ErrorBody["error"]["details"]>[number];

/**
 * Every code the server answers (the route table's list), plus the two the
 * client makes up itself: `network_error` (no HTTP answer at all, status 0, or
 * the body broke off) and `bad_response` (an answer that is not the JSON the
 * interface promises). Any other string the server may add later (D13: changes
 * are additive) is kept as is.
 */
export type ApiErrorCode = ServerErrorCode | "network_error" | "bad_response" | (string & {});

export interface CdsnapApiErrorInit {
  status: number;
  code: ApiErrorCode;
  message: string;
  details?: ApiErrorDetail[];
  cause?: unknown;
}

/**
 * @example
 *   try {
 *     await client.updateBusinessOffers(offers);
 *   } catch (error) {
 *     if (error instanceof CdsnapApiError && error.code === "validation_failed") {
 *       for (const d of error.details ?? []) console.warn(d.path, d.message);
 *     } else throw error;
 *   }
 */
export class CdsnapApiError extends Error {
  /** The HTTP status, or 0 when no answer arrived (`network_error`). */
  readonly status: number;
  readonly code: ApiErrorCode;
  /** Only on `validation_failed`: which member broke which rule. */
  readonly details: ApiErrorDetail[] | undefined;

  constructor(init: CdsnapApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "CdsnapApiError";
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
  }
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== "object" || value === null) return false;
  const error = (value as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return false;
  const { code, message, details } = error as Record<string, unknown>;
  return typeof code === "string" && typeof message === "string" && (details === undefined || Array.isArray(details));
}

/** The error of a non-2xx answer: the D6 body when it is one, `bad_response` otherwise. */
export function errorOfResponse(status: number, text: string, what: string): CdsnapApiError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!isErrorBody(body)) {
    return new CdsnapApiError({
      status,
      code: "bad_response",
      message: `${what} answered ${status} without a cdsnap error body`,
    });
  }
  const { code, message, details } = body.error;
  return new CdsnapApiError({ status, code, message, ...(details ? { details } : {}) });
}
