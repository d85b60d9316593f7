/**
 * The `yaml` package, loaded on its first use: js-yaml reads the usual front
 * matter (front-matter.ts), and `yaml` is needed only for the rest, for the
 * problems it reports with their lines, and for a plain scalar that may be a
 * number, a boolean or null. Loading it took 24 ms, a twentieth of a rebuild
 * that parses one post. It is CommonJS on Node, so it loads synchronously.
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
let loaded: typeof import("yaml") | undefined;

export function yamlLib(): typeof import("yaml") {
  return (loaded ??= require("yaml") as typeof import("yaml"));
}
