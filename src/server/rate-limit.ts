/**
 * D6: at most `perMinute` PATCH requests a minute per key, refused ones
 * included. A token bucket: a full minute's allowance may come in a burst, then
 * one request every 60/perMinute seconds.
 */
export interface RateLimiter {
  /** 0 when allowed (and counted); otherwise the seconds to wait. */
  take(key: string): number;
}

export function createRateLimiter(perMinute: number, clock: () => number = Date.now): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const refillPerMs = perMinute / 60_000;
  return {
    take(key) {
      const now = clock();
      const bucket = buckets.get(key) ?? { tokens: perMinute, at: now };
      bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.at) * refillPerMs);
      bucket.at = now;
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerMs / 1000));
    },
  };
}
