/**
 * The order in which the pipelined requests of one connection are handled
 * (RFC 9112 §9.3.2): safe ones at once, and nothing past an unsafe one until
 * it is answered.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Arrival, InFlight, OnRequest } from "./http-server.js";

/** Answers a request, and settles it in the requests in flight once done. */
export type Handle = (req: IncomingMessage, res: ServerResponse, arrival: Arrival) => Promise<void>;

// RFC 9112 §9.3.2: pipelined requests may be processed in parallel only while all are safe.
const isSafe = (method: string | undefined) => method === "GET" || method === "HEAD" || method === "OPTIONS";

/**
 * Settles once every earlier answer on the request's connection has been sent
 * (Node gives a queued response its socket only then), or once the connection
 * closed.
 */
function earlierAnswered(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (res.socket) return Promise.resolve();
  return new Promise((resolve) => {
    const settle = () => {
      res.off("socket", settle);
      req.off("close", settle);
      resolve();
    };
    res.once("socket", settle);
    req.once("close", settle);
  });
}

/**
 * Pipelined requests of a connection: while no unsafe one is pending, each is
 * handled at once (a cached GET in one synchronous pass). Behind an unsafe
 * one, a request waits until it is answered: a GET pipelined behind a PATCH
 * reads what that PATCH stored. An unsafe request waits for every answer
 * before it. Other connections are never held up.
 */
export function orderPerConnection(handle: Handle, requests: InFlight): OnRequest {
  // The unsafe request last queued on each connection, settled once it has been answered.
  const unsafeTails = new WeakMap<Socket, Promise<void>>();

  // A request queued on a connection that closed meanwhile has no one to answer: Node drops its response too.
  function handleUnlessGone(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<void> {
    if (!req.destroyed) return handle(req, res, arrival);
    requests.settle();
    return Promise.resolve();
  }

  return function onRequest(req, res, arrival) {
    requests.start();
    const socket = req.socket;
    const tail = unsafeTails.get(socket);
    if (isSafe(req.method)) {
      if (tail === undefined) void handle(req, res, arrival);
      else void tail.then(() => handleUnlessGone(req, res, arrival));
      return;
    }
    const answered = earlierAnswered(req, res).then(() => handleUnlessGone(req, res, arrival));
    unsafeTails.set(socket, answered);
    void answered.then(() => {
      if (unsafeTails.get(socket) === answered) unsafeTails.delete(socket);
    });
  };
}
