// Builds @cdsnap/astro (packages/astro) from its source (packages/astro/src): one ES
// module, and one declaration file per source module. Astro and the client stay
// imports, of the copies the site installed: the package bundles neither, nor
// zod, whose copy must be the one Astro validates with. Run by the package's
// `prepack`, from its folder or from the repository's root.
import { build } from "esbuild";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = path.join(root, "packages/astro");
const out = path.join(pkg, "dist");
/** What the package's code and declarations may import: its peer dependencies. */
const EXTERNAL = /^(astro|astro\/.+|@cdsnap\/client)$/;
rmSync(out, { recursive: true, force: true });

await build({
  entryPoints: [path.join(pkg, "src/index.ts")],
  bundle: true,
  // Loaders run at build time under Node, live loaders in whatever runtime the adapter targets.
  platform: "neutral",
  target: "es2022",
  format: "esm",
  sourcemap: true,
  logLevel: "warning",
  external: ["astro", "astro/*", "@cdsnap/client"],
  outfile: path.join(out, "index.js"),
});

const config = ts.getParsedCommandLineOfConfigFile(path.join(pkg, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
if (!config || config.errors.length > 0) throw new Error("packages/astro/tsconfig.json does not parse");
const program = ts.createProgram(config.fileNames, { ...config.options, noEmit: false, declaration: true, emitDeclarationOnly: true });
const diagnostics = ts.getPreEmitDiagnostics(program);
const src = path.join(pkg, "src");
// The program holds the client's source too (tsconfig.json's paths): only the package's own modules are emitted.
for (const file of program.getSourceFiles().filter((sf) => sf.fileName.startsWith(`${src}/`))) {
  const emitted = program.emit(file, (name, text) => {
    for (const [, from, inline] of text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']/gm)) {
      const specifier = from ?? inline;
      if (!specifier.startsWith("./") && !EXTERNAL.test(specifier)) throw new Error(`${name} imports ${specifier}, which a site does not have`);
    }
    writeFileSync(path.join(out, path.basename(name)), text);
  }, undefined, true);
  diagnostics.push(...emitted.diagnostics);
}
if (diagnostics.length > 0) {
  const host = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => "\n" };
  throw new Error(ts.formatDiagnostics(diagnostics, host));
}
