/**
 * The eviction both of the server's byte caches use (file bytes, compressed
 * codings): oldest first, but an entry hit since the last pass goes to the
 * back once (the "second chance" clock), so a hot file outlives a burst of cold ones.
 */
export interface Evictable {
  used: boolean;
}

/** Evicts from `entries` (insertion order = age) until `total` bytes fit in `maxBytes`; returns the new total. */
export function evictToFit<E extends Evictable>(entries: Map<string, E>, total: number, maxBytes: number, sizeOf: (entry: E) => number): number {
  for (const [key, entry] of entries) {
    if (total <= maxBytes) break;
    entries.delete(key);
    if (entry.used) {
      entry.used = false;
      entries.set(key, entry);
    } else {
      total -= sizeOf(entry);
    }
  }
  return total;
}
