/**
 * What the `--on-change` command reads on its stdin: one JSON object per run,
 * saying which cached answers a change made stale. It carries paths, tags and
 * organization ids, never a key, a key's hash or a stored value.
 * `schemas/ChangeEvent.schema.json` is generated from this.
 */
import { z } from "zod";
import { idSchema } from "./rules.js";

export const CHANGE_EVENTS = ["patch", "build", "access"] as const;

export type ChangeKind = (typeof CHANGE_EVENTS)[number];

const sortedUnique = <T extends z.ZodType<string>>(item: T) =>
  z.array(item).refine((list) => list.every((value, i) => i === 0 || list[i - 1]! < value), {
    message: "must be sorted, without repeats",
  });

export const changeEventSchema = z.strictObject({
  event: z
    .enum(CHANGE_EVENTS)
    .describe(
      "patch: a PATCH changed an organization file (or the server repaired one on start); " +
        "build: a build published a new tree, or brought organization files up to the database; " +
        "access: who may read an organization's answers changed (a key was revoked or deleted, or its allowed origins changed), " +
        "so every cached answer of those organizations is suspect though no file changed.",
    ),
  paths: sortedUnique(z.string().regex(/^\/api\//))
    .describe("The API paths whose answer changed, appeared or disappeared (no query string; a cached `?pages=` variant is stale with its path); sorted, each once."),
  tags: sortedUnique(z.string().min(1))
    .describe(
      "Cache-Tag values that, purged, drop every stale answer: for each path the tag of its collection or item; " +
        "for an access event `org:<id>`, the tag every answer of the organization carries; sorted, each once.",
    ),
  orgs: sortedUnique(idSchema).describe("The organizations concerned; sorted, each once."),
  time: z.iso.datetime().describe("When the first change this run carries was committed."),
  merged: z
    .number()
    .int()
    .min(1)
    .describe("How many changes this one run carries: more than 1 when changes came while an earlier run was still going."),
});

export type ChangeEvent = z.infer<typeof changeEventSchema>;
