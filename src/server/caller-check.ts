/**
 * Who sends a request (auth.ts), with the failed keys of each client address
 * counted: past its allowance an address gets 429. Behind a proxy the address
 * is the one `--client-address-header` names.
 */
import type { IncomingMessage } from "node:http";
import { httpError } from "../api-errors.js";
import { CdsnapError } from "../errors.js";
import type { AuthCache, Caller } from "./auth.js";
import type { ServeOptions } from "./create-server.js";
import { createRateLimiter, DEFAULT_AUTH_FAILURE_RATE } from "./rate-limit.js";
import { forwardedAddressOf } from "./request-head.js";
import type { Logger } from "./respond.js";

const AUTH_FAILURES = "too many requests without a valid API key from this address";

/**
 * The caller of a request, or the D5 refusal. Failures are counted per
 * client address, and an address out of allowance is refused before its key
 * is even hashed: guessing keys costs the server next to nothing.
 */
export function createCallerCheck(
  auth: AuthCache,
  options: Pick<ServeOptions, "authFailureRate" | "clientAddressHeader">,
  clock: () => number,
  log: Logger,
): (req: IncomingMessage) => Caller {
  const authFailureRate = options.authFailureRate ?? DEFAULT_AUTH_FAILURE_RATE;
  const authFailures = authFailureRate > 0 ? createRateLimiter(authFailureRate, clock) : null;
  const addressHeader = options.clientAddressHeader?.toLowerCase();
  const clientAddress = (req: IncomingMessage): string =>
    (addressHeader && forwardedAddressOf(req.rawHeaders, addressHeader)) || (req.socket.remoteAddress ?? "");
  const noteForwarded = forwardedWarning(addressHeader !== undefined || authFailures === null, log);

  return function authenticate(req) {
    noteForwarded(req);
    if (!authFailures) return auth.authenticate(req.headers["x-api-key"]);
    const address = clientAddress(req);
    const wait = authFailures.wait(address);
    if (wait > 0) throw httpError.rateLimited(wait, AUTH_FAILURES);
    try {
      return auth.authenticate(req.headers["x-api-key"]);
    } catch (error) {
      if (error instanceof CdsnapError && error.status === 401) authFailures.take(address);
      throw error;
    }
  };
}

/**
 * Behind a proxy, every request comes from the proxy's address: without
 * --client-address-header, one client's failed keys count against all of
 * them. Said once, on the first request that shows a proxy; never when
 * `needless` (the header is set, or failed keys are not counted).
 */
function forwardedWarning(needless: boolean, log: Logger): (req: IncomingMessage) => void {
  let forwardedNoted = needless;
  return function noteForwarded(req) {
    if (forwardedNoted || (req.headers["x-forwarded-for"] === undefined && req.headers.forwarded === undefined)) return;
    forwardedNoted = true;
    log({
      level: "warn",
      msg: "forwarded without --client-address-header",
      detail:
        "requests arrive through a proxy (they carry X-Forwarded-For or Forwarded), and failed keys are counted per address: every client behind it shares the proxy's, so one client sending bad keys gets all of them refused with 429; set --client-address-header to the header the proxy writes the client's address in",
    });
  };
}
