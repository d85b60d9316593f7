// Bundles the CLI, the library, the browser client and the edge handler into dist/. Node
// dependencies stay external (better-sqlite3 is a native addon); the client
// has none and is bundled for any platform that has fetch.
//
// The Node entry points are split: what a command imports with `await
// import()` when it runs (see src/cli/main.ts) is in chunks loaded then, and
// code shared by entry points or by those imports is in chunks loaded once.
// The chunks sit beside the entry points, not in a folder, because modules
// that find a file by `import.meta.url` (the parse worker, edge.js, the demo's
// posts) must resolve it from dist/ whichever file esbuild puts them in. Keep
// the hash in chunk names: the build's CODE_VERSION is the hash of its own
// chunk, which changes with the renderer's code only because it names the
// renderer's chunks by their hashes (test/cli/lazy-load.test.ts).
//
// `--types` also writes the type declarations the package ships (dist/types,
// see tsconfig.build.json): `npm run build`, and so `prepare`, passes it;
// `build:cli`, which tests and the demo run, does not need them.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

// Every package stays outside the bundle but zod: imported as a package, its
// hundred modules took 58 ms to resolve and link at each start of a command
// that validates anything (a no-op build is 400 ms); bundled, they are parsed
// as one file.
const manifest = JSON.parse(readFileSync("package.json", "utf8"));
const bundledOutside = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) => name !== "zod");

/**
 * zod's namespace re-exports every locale it has (`z.locales`: about 60, half
 * the bundled package, 370 KB); its messages are set to English by
 * `config(en())` whatever is exported. Nothing here reads another locale, so
 * the locales module is replaced by one that exports `en` alone: loading zod
 * (every validating command, every build thread) took 26 ms, now 19.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer) ? { path: "zod-locales", namespace: "zod-english-only", pluginData: args.resolveDir } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-english-only" }, (args) => ({
      contents: `export { default as en } from "../locales/en.js";`,
      resolveDir: args.pluginData,
    }));
  },
};

const common = { bundle: true, target: "node20", format: "esm", sourcemap: true, logLevel: "warning", write: false, plugins: [zodEnglishOnly] };

/**
 * Writes what changed, each file by a rename: a test suite runs this script
 * while others run dist/cli.js, which must never read a half-written chunk.
 */
function emit({ outputFiles }) {
  for (const file of outputFiles) {
    if (existsSync(file.path) && readFileSync(file.path).equals(file.contents)) continue;
    const temp = `${file.path}.${process.pid}.tmp`;
    mkdirSync(path.dirname(file.path), { recursive: true });
    writeFileSync(temp, file.contents);
    renameSync(temp, file.path);
  }
  return outputFiles.map((file) => file.path);
}

const node = emit(
  await build({
    ...common,
    platform: "node",
    external: bundledOutside,
    splitting: true,
    chunkNames: "chunk-[hash]",
    entryPoints: {
      cli: "src/cli/main.ts",
      index: "src/index.ts",
      "parse-worker": "src/sources/parse-worker.ts",
      "render-worker": "src/emit/render-worker.ts",
      "tools/generate-schemas": "src/contract/generate-cli.ts",
    },
    outdir: "dist",
  }),
);
// A chunk's name is its content's hash: those of earlier builds are never overwritten, and would ship.
for (const name of readdirSync("dist")) {
  if (/^chunk-\w+\.js(\.map)?$/.test(name) && !node.includes(path.resolve("dist", name))) rmSync(path.join("dist", name));
}
if (existsSync("src/client/index.ts")) {
  emit(await build({ ...common, platform: "neutral", target: "es2022", entryPoints: { client: "src/client/index.ts" }, outdir: "dist" }));
}
// The edge handler runs on Workers: a neutral bundle fails here if anything it imports needs Node.
if (existsSync("src/edge/index.ts")) {
  emit(await build({ ...common, platform: "neutral", target: "es2022", entryPoints: { edge: "src/edge/index.ts" }, outdir: "dist" }));
}

if (process.argv.includes("--types")) {
  // tsc never deletes: a declaration whose source is gone would stay and ship.
  rmSync("dist/types", { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { stdio: "inherit" });
}
