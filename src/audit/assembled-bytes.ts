/**
 * The audit's own reading of a list or a page as the build assembles it: its
 * items' bytes joined by commas between `{"items":[` and a tail. Written here,
 * not taken from render/, so that the proof a page is its items does not rest
 * on the code that made the page.
 */

/** A list or a page as the build hands it over: its items' bytes, in order, and what follows them. */
export interface AssembledParts {
  items: readonly Buffer[];
  /** `]}` for a list; `],"meta":…}` for a page. */
  tail: string;
}

const OPEN = Buffer.from('{"items":[', "utf8");
const COMMA = 0x2c;

/** The bytes of a list or a page of these items. */
export function assembledBytes(items: readonly Buffer[], tail: string): Buffer {
  const parts: Buffer[] = [OPEN];
  items.forEach((item, i) => parts.push(...(i > 0 ? [Buffer.of(COMMA), item] : [item])));
  parts.push(Buffer.from(tail, "utf8"));
  return Buffer.concat(parts);
}

/**
 * Whether `bytes` are exactly `parts`' items joined by commas, between
 * `{"items":[` and the tail. Items that lie one after another in one buffer,
 * a comma between each (a page of a list's views), are compared as one span:
 * a page of the contents list costs one comparison, not one per item.
 */
export function isAssembledFrom(bytes: Buffer, { items, tail }: AssembledParts): boolean {
  if (bytes.length < OPEN.length || bytes.compare(OPEN, 0, OPEN.length, 0, OPEN.length) !== 0) return false;
  let at = OPEN.length;
  for (let i = 0; i < items.length; ) {
    const first = items[i]!;
    const under = new Uint8Array(first.buffer);
    let end = first.byteOffset + first.length;
    let next = i + 1;
    for (; next < items.length; next++) {
      const item = items[next]!;
      if (item.buffer !== first.buffer || item.byteOffset !== end + 1 || under[end] !== COMMA) break;
      end = item.byteOffset + item.length;
    }
    if (i > 0 && bytes[at++] !== COMMA) return false;
    const length = end - first.byteOffset;
    if (at + length > bytes.length || bytes.compare(under, first.byteOffset, end, at, at + length) !== 0) return false;
    at += length;
    i = next;
  }
  return bytes.subarray(at).equals(Buffer.from(tail, "utf8"));
}
