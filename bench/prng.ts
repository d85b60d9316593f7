/**
 * A small seeded PRNG (mulberry32) and the helpers the generator draws with.
 * Every post and block gets its own stream, derived from (seed, kind, index), so
 * one post can be re-rendered alone (the bench adds posts this way) and the
 * same seed always gives the same bytes.
 */
export type Rng = () => number;

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a over the parts: a stable 32-bit seed for one stream. */
export function streamSeed(seed: number, kind: string, index: number): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (const ch of `${kind}:${index}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function streamOf(seed: number, kind: string, index: number): Rng {
  return mulberry32(streamSeed(seed, kind, index));
}

/** An integer in [min, max], both included. */
export function int(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)] as T;
}

/** `count` distinct items, in the order drawn. */
export function pickDistinct<T>(rng: Rng, items: readonly T[], count: number): T[] {
  const chosen = new Set<T>();
  while (chosen.size < Math.min(count, items.length)) chosen.add(pick(rng, items));
  return [...chosen];
}

export function chance(rng: Rng, p: number): boolean {
  return rng() < p;
}

export function hex(rng: Rng, length: number): string {
  let out = "";
  while (out.length < length) out += Math.floor(rng() * 16).toString(16);
  return out;
}

export function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}
