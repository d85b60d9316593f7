// Builds the API reference, one HTML page, from schemas/openapi.json with Redocly's
// CLI (Redoc 3): `npm run docs` writes dist/docs/api.html.
//
// The page has to work opened from the file system with no network, so three things
// are done beyond a plain `redocly build-docs`:
// - Redoc's script is inlined (`--inlineBundle`) instead of loaded from Redocly's CDN;
// - telemetry is off (REDOCLY_TELEMETRY=off): the CLI then sends nothing, and it also
//   builds the page with `disableTelemetry`, without which the page itself reports
//   to Redocly while it is read;
// - the only image Redoc still fetches, its logo under "API docs by" in the sidebar,
//   is replaced by an inline one. test/e2e/api-reference.test.ts opens the page in a
//   browser with the network cut off and fails on any request that leaves the file.
//
// Usage: node scripts/api-reference.mjs [--spec schemas/openapi.json] [--out dist/docs/api.html]
import { execFile } from "node:child_process";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TITLE = "cdsnap API";
const REDOC_LOGO = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;
const INLINE_LOGO = `data:image/svg+xml,${encodeURIComponent(
  `<svg xmlns="http://www.w3.org/2000/svg" width="52" height="16" viewBox="0 0 52 16">` +
    `<text x="0" y="12.5" font-family="sans-serif" font-size="13" font-weight="600" fill="#4d7cfe">Redoc</text></svg>`,
)}`;

const { values: args } = parseArgs({
  options: {
    spec: { type: "string", default: path.join(ROOT, "schemas/openapi.json") },
    out: { type: "string", default: path.join(ROOT, "dist/docs/api.html") },
  },
});
const spec = path.resolve(args.spec);
const out = path.resolve(args.out);
const cli = path.join(path.dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")), "bin/cli.js");

await mkdir(path.dirname(out), { recursive: true });
const temp = `${out}.${process.pid}.tmp`;
try {
  try {
    await promisify(execFile)(
      process.execPath,
      [cli, "build-docs", spec, "--inlineBundle", "--title", TITLE, "--output", temp],
      {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
  } catch (error) {
    // The CLI's own report says what is wrong with the document; pass it on whole.
    process.stderr.write(`${error.stdout ?? ""}${error.stderr ?? ""}`);
    throw new Error(`redocly build-docs failed on ${path.relative(process.cwd(), spec)}`);
  }
  const html = (await readFile(temp, "utf8")).replace(REDOC_LOGO, INLINE_LOGO);
  if (html.includes("https://cdn.redoc.ly/")) {
    throw new Error("the page still loads an image from cdn.redoc.ly: a new Redoc has another logo; inline that one too");
  }
  if (!/__redoc_options = \{[^}]*"disableTelemetry":true/.test(html)) {
    throw new Error("the page was built without disableTelemetry: Redoc would report to Redocly while it is read");
  }
  await writeFile(temp, html);
  await rename(temp, out);
} catch (error) {
  await rm(temp, { force: true });
  console.error(`api-reference: ${error.message}`);
  process.exit(1);
}
console.log(`API reference: ${path.relative(process.cwd(), out)} (${TITLE}, from ${path.relative(process.cwd(), spec)})`);
