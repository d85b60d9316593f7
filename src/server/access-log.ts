/**
 * The server's log: by default one JSON line per call on stdout, and for every
 * request the access log line, once its answer is out or its connection broke off.
 */
import type { Exchange, Logger } from "./respond.js";

// Lines are gathered and written once per turn of the event loop: one write
// per request was a measurable share of a busy server's time.
let pendingLines: string[] = [];
export function flushLog(): void {
  if (pendingLines.length === 0) return;
  const text = pendingLines.join("");
  pendingLines = [];
  process.stdout.write(text);
}

// A busy server logs many lines within one millisecond; formatting its time once is enough.
let lastMs = NaN;
let lastTime = "";
function timeNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = new Date(now).toISOString();
  }
  return lastTime;
}

export const defaultLogger: Logger = (line) => {
  if (pendingLines.length === 0) setImmediate(flushLog);
  pendingLines.push(`${JSON.stringify({ time: timeNow(), ...line })}\n`);
};

/** `rawPath` is the request's path as sent, without its query. */
export function logWhenClosed(ex: Exchange, rawPath: string, log: Logger): void {
  const { req, res } = ex;
  // "close" comes once per request, after "finish" or instead of it when the connection broke off.
  res.once("close", () => {
    const line: Record<string, unknown> = {
      method: req.method,
      path: rawPath,
      status: res.statusCode,
      ms: Number((process.hrtime.bigint() - ex.started) / 1000n) / 1000,
      keyId: ex.keyId ?? null,
    };
    if (!res.writableFinished) line.aborted = true;
    log(line);
  });
}
