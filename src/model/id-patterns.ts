/**
 * The id and slug patterns of D9, without zod: src/api-paths.ts needs them, and
 * the browser client bundles api-paths, so this module must import nothing.
 * src/model/rules.ts re-exports them beside the zod schemas built on them.
 */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** D9: `by-slug` would make `…/by-slug/{slug}` ambiguous. */
export const RESERVED_ID = "by-slug";
