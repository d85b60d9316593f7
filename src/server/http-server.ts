/**
 * The node:http server under `cdsnap serve`: its limits on slow clients, the
 * events requests arrive by, listening, and closing once the requests in
 * flight are answered.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { HEAD_LIMITS, refuseLikeCdsnap } from "./client-error.js";

export interface ServerTimeouts {
  /** The whole header block must arrive within this (slowloris); default 10 s. */
  headersMs?: number;
  /** The whole request, body included, must arrive within this; default 30 s. */
  requestMs?: number;
  /** An idle keep-alive connection is closed after this; default 5 s. */
  keepAliveMs?: number;
  /** How often expired requests are looked for: a timeout fires at most this late; default 1 s. */
  checkIntervalMs?: number;
}

export const DEFAULT_TIMEOUTS: Required<ServerTimeouts> = Object.freeze({
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  checkIntervalMs: 1_000,
});

/** How Node handed a request over: its own event, or the event of an `Expect` header. */
export type Arrival = "request" | "checkContinue" | "checkExpectation";

export type OnRequest = (req: IncomingMessage, res: ServerResponse, arrival: Arrival) => void;

export function createHttpServer(limits: ServerTimeouts | undefined, onRequest: OnRequest): Server {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...limits };
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // Node looks for expired requests every 30 s by default: a 10 s header timeout could take 40.
      connectionsCheckingInterval: timeouts.checkIntervalMs,
      // Node's own refusal has an empty body; checkHost answers it with the D6 one.
      requireHostHeader: false,
      ...HEAD_LIMITS,
    },
    (req, res) => onRequest(req, res, "request"),
  );
  refuseLikeCdsnap(server);
  // Node would answer these itself: 100 Continue before any check, 417 without the D6 body.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => onRequest(req, res, "checkContinue"));
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => onRequest(req, res, "checkExpectation"));
  return server;
}

/** Settles once the server listens; rejects when it cannot (the port taken, the host unknown). */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
}

export function urlOf(server: Server): string {
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** The requests being handled, for a close that lets them finish. */
export interface InFlight {
  readonly count: number;
  /** A request arrived. */
  start(): void;
  /** A request was answered, or dropped unanswered. */
  settle(): void;
  /** Settles once no request is in flight any more. */
  drained(): Promise<void>;
}

export function countInFlight(): InFlight {
  let count = 0;
  let drained: (() => void) | null = null;
  return {
    get count() {
      return count;
    },
    start() {
      count++;
    },
    settle() {
      if (--count === 0) drained?.();
    },
    drained: () => new Promise<void>((resolve) => (drained = resolve)),
  };
}

/** Stops accepting, lets the requests in flight finish (at most `graceMs`), then closes every connection. */
export async function closeDraining(server: Server, requests: InFlight, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  if (requests.count > 0) {
    await Promise.race([requests.drained(), new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref())]);
  }
  server.closeAllConnections();
  await closed;
}
