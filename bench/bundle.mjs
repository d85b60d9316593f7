// Bundles the benchmark entries into dist/bench/ (run from the repository root).
// Dependencies stay external: better-sqlite3 is a native addon, autocannon is
// a devDependency resolved from node_modules at run time.
import { build } from "esbuild";

await build({
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  sourcemap: true,
  logLevel: "warning",
  entryPoints: {
    run: "bench/run.ts",
    floor: "bench/floor.ts",
    "memory-server": "bench/memory-server.ts",
    "edge-latency": "bench/edge-latency.ts",
    "fused-pipeline": "bench/fused-pipeline.ts",
  },
  outdir: "dist/bench",
});
