// Bundles the CLI, the library and the browser client into dist/. Node
// dependencies stay external (better-sqlite3 is a native addon); the client
// has none and is bundled for any platform that has fetch.
import { build } from "esbuild";
import { existsSync } from "node:fs";

const common = { bundle: true, target: "node20", format: "esm", sourcemap: true, logLevel: "warning" };

await build({
  ...common,
  platform: "node",
  packages: "external",
  entryPoints: {
    cli: "src/cli/main.ts",
    index: "src/index.ts",
    "parse-worker": "src/sources/parse-worker.ts",
    "tools/generate-schemas": "src/contract/generate-cli.ts",
  },
  outdir: "dist",
});
if (existsSync("src/client/index.ts")) {
  await build({ ...common, platform: "neutral", target: "es2022", entryPoints: { client: "src/client/index.ts" }, outdir: "dist" });
}
