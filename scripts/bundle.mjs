// Bundles the CLI and the library entry into dist/. Dependencies stay external
// (better-sqlite3 is a native addon and cannot be bundled).
import { build } from "esbuild";

const common = { bundle: true, platform: "node", target: "node20", format: "esm", packages: "external", sourcemap: true, logLevel: "warning" };

await build({ ...common, entryPoints: { cli: "src/cli/main.ts" }, outdir: "dist" });
