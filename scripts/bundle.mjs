// Bundles the CLI, the library, the browser client and the edge handler into dist/. Node
// dependencies stay external (better-sqlite3 is a native addon); the client
// has none and is bundled for any platform that has fetch.
//
// `--types` also writes the type declarations the package ships (dist/types,
// see tsconfig.build.json): `npm run build`, and so `prepare`, passes it;
// `build:cli`, which tests and the demo run, does not need them.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { createRequire } from "node:module";

const common = { bundle: true, target: "node20", format: "esm", sourcemap: true, logLevel: "warning" };

await build({
  ...common,
  platform: "node",
  packages: "external",
  entryPoints: {
    cli: "src/cli/main.ts",
    index: "src/index.ts",
    "parse-worker": "src/sources/parse-worker.ts",
    "render-worker": "src/emit/render-worker.ts",
    "tools/generate-schemas": "src/contract/generate-cli.ts",
  },
  outdir: "dist",
});
if (existsSync("src/client/index.ts")) {
  await build({ ...common, platform: "neutral", target: "es2022", entryPoints: { client: "src/client/index.ts" }, outdir: "dist" });
}
// The edge handler runs on Workers: a neutral bundle fails here if anything it imports needs Node.
if (existsSync("src/edge/index.ts")) {
  await build({ ...common, platform: "neutral", target: "es2022", entryPoints: { edge: "src/edge/index.ts" }, outdir: "dist" });
}

if (process.argv.includes("--types")) {
  // tsc never deletes: a declaration whose source is gone would stay and ship.
  rmSync("dist/types", { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { stdio: "inherit" });
}
