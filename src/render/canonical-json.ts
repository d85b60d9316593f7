/**
 * Serializes with object keys sorted, so the same data always gives the same
 * bytes: stable hashes, ETags and deploy diffs whatever order code built it in.
 */
function isSorted(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]! > keys[i]!) return false;
  return true;
}

// Copies only what is out of order: rendered and re-parsed data mostly is in
// order already, and copying every object was a tenth of a build's CPU.
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const member = sortKeys(value[i]);
      if (copy) copy.push(member);
      else if (member !== value[i]) copy = [...value.slice(0, i), member];
    }
    return copy ?? value;
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    let same = isSorted(keys);
    const members = keys.map((key) => {
      const member = record[key];
      if (member === undefined) {
        same = false;
        return member;
      }
      const sorted = sortKeys(member);
      if (sorted !== member) same = false;
      return sorted;
    });
    if (same) return value;
    const sorted: Record<string, unknown> = {};
    const order = keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
    for (const i of order) if (members[i] !== undefined) sorted[keys[i]!] = members[i];
    return sorted;
  }
  return value;
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/** Plain code-unit order (D2), never a locale collation. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
