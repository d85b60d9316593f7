/** How many post details are asked for at once: enough to hide the round trips, few enough for any origin. */
export const CONCURRENCY = 8;

/** `task` on every item, at most `limit` at a time; the results in the items' order. Rejects with the first failure. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await task(items[at]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
