/**
 * Token buckets: at most `perMinute` a minute per key, a full minute's
 * allowance in a burst, then one every 60/perMinute seconds. D6 counts every
 * PATCH of a key, refused ones included; the server also counts each client
 * address's failed authentications.
 */
export interface RateLimiter {
  /** 0 when allowed (and counted); otherwise the seconds to wait. */
  take(key: string): number;
  /** 0 when `key` would be allowed now; otherwise the seconds to wait. Counts nothing. */
  wait(key: string): number;
}

/** `serve`'s limits unless told otherwise: here, in a module that imports nothing, so that `cdsnap serve --help` shows them without loading the server. */
export const DEFAULT_WRITE_RATE = 60;
export const DEFAULT_AUTH_FAILURE_RATE = 30;

interface Bucket {
  tokens: number;
  at: number;
}

// A full bucket is the same as none: sweeping full ones now and then bounds the
// map by the keys counted in the last minute or two, however many come and go
// (client addresses do).
const SWEEP_MS = 60_000;

export function createRateLimiter(perMinute: number, clock: () => number = Date.now): RateLimiter {
  const buckets = new Map<string, Bucket>();
  let sweptAt = clock();
  // Multiplied before divided: waiting exactly the Retry-After announced refills a whole token, not 0.999….
  const tokensAt = (bucket: Bucket, now: number) => Math.min(perMinute, bucket.tokens + ((now - bucket.at) * perMinute) / 60_000);
  const secondsUntilOne = (tokens: number) => Math.max(1, Math.ceil(((1 - tokens) * 60_000) / perMinute / 1000));

  function sweep(now: number): void {
    if (now - sweptAt < SWEEP_MS) return;
    sweptAt = now;
    for (const [key, bucket] of buckets) if (tokensAt(bucket, now) >= perMinute) buckets.delete(key);
  }

  return {
    take(key) {
      const now = clock();
      sweep(now);
      const bucket = buckets.get(key) ?? { tokens: perMinute, at: now };
      bucket.tokens = tokensAt(bucket, now);
      bucket.at = now;
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return secondsUntilOne(bucket.tokens);
    },
    wait(key) {
      const bucket = buckets.get(key);
      if (bucket === undefined) return 0;
      const tokens = tokensAt(bucket, clock());
      return tokens >= 1 ? 0 : secondsUntilOne(tokens);
    },
  };
}
