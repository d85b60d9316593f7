/**
 * Runs `fn` over `items` with at most `limit` calls in flight, results in input
 * order. File work goes through this so a 100k-post build never holds more than
 * `limit` descriptors open (the hard limit here is 20,000).
 *
 * After a failure no new call starts, and the first error is thrown only once
 * the calls in flight have settled: a caller that cleans up on error (removing
 * a half-written generation) must not race writes still under way.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  async function worker(): Promise<void> {
    while (next < items.length && !failure) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
  return results;
}

/** How many files the build keeps open at once. */
export const FILE_CONCURRENCY = 64;
