/**
 * Runs `fn` over `items` with at most `limit` calls in flight, results in input
 * order. File work goes through this so a 100k-post build never holds more than
 * `limit` descriptors open (the hard limit here is 20,000).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** How many files the build keeps open at once. */
export const FILE_CONCURRENCY = 64;
