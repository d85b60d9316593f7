/**
 * Wording of zod issues for people: zod's own text for an enum ("Invalid
 * option: expected one of \"draft\"|…") names neither the value found nor the
 * options plainly, and both sources (front matter and database rows) share it.
 */
import type { z } from "zod";

/** For an enum's issue, `must be one of a, b, c, not "x"`; undefined for any other issue. */
export function notAnOptionMessage(issue: z.core.$ZodIssue, value: unknown): string | undefined {
  if (issue.code !== "invalid_value") return undefined;
  return `must be one of ${issue.values.map(String).join(", ")}, not ${JSON.stringify(String(value))}`;
}

/** The value at `path` inside `input`, as far as the path leads. */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
