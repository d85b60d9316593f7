// Builds @cdsnap/client (packages/client) from the same source as `cdsnap/client`
// (src/client): one ES module bundled for any platform with fetch, and one
// declaration file with every type it names written out, so the package needs
// nothing installed beside it (no zod, no Node types). Run by the package's
// `prepack`, from its folder or from the repository's root.
import { build } from "esbuild";
import { generateDtsBundle } from "dts-bundle-generator";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const entry = path.join(root, "src/client/index.ts");
const out = path.join(root, "packages/client/dist");
mkdirSync(out, { recursive: true });

await build({
  entryPoints: [entry],
  bundle: true,
  platform: "neutral",
  target: "es2022",
  format: "esm",
  sourcemap: true,
  logLevel: "warning",
  outfile: path.join(out, "index.js"),
});

const [declarations] = generateDtsBundle([{ filePath: entry, output: { noBanner: true, exportReferencedTypes: false } }], {
  preferredConfigPath: path.join(root, "packages/client/tsconfig.json"),
});
// A declaration that imports anything would need that package installed beside this one.
if (/^\s*import\b|\bimport\(|from\s+["']/m.test(declarations)) throw new Error("the client's declarations import another module");
writeFileSync(path.join(out, "index.d.ts"), declarations);
