/**
 * `cdsnap edge init`: a Cloudflare Workers project for a built tree. The
 * worker is the bundled handler; the tree is its static assets (uploaded by
 * each `wrangler deploy`); the edge document goes into a KV namespace, so a
 * revocation needs no deploy. Deploying is wrangler's: the project's README
 * says the commands.
 */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { assertPublishedTree } from "../server/published-tree.js";
import { edgeDocumentFileOf } from "./publish-document.js";
import { EDGE_WORKER_SOURCE, WORKER_COMPATIBILITY_DATE } from "./worker-source.js";

export interface EdgeInitOptions {
  /** The published tree (`--out` of the build). */
  out: string;
  /** The project folder. */
  to: string;
  name?: string;
  origin?: string;
  /** The `cdsnap/edge` bundle (dist/edge.js); default the one beside this code. */
  edgeBundle?: string;
}

/** Placeholder ids a person replaces: deploying with them fails, loudly. */
export const KV_ID_PLACEHOLDER = "REPLACE-with-the-id-from-wrangler-kv-namespace-create";
const ORIGIN_PLACEHOLDER = "https://origin.example.com";

function wranglerConfig(name: string, assets: string, origin: string): string {
  return `// Written by cdsnap edge init: the cdsnap read API as a Cloudflare Worker (README.md).
{
  "name": ${JSON.stringify(name)},
  "main": "worker.js",
  "compatibility_date": "${WORKER_COMPATIBILITY_DATE}",
  // The published tree, uploaded as static assets by each deploy. The worker runs
  // first on every request, so a file is only ever reached through the key check.
  "assets": { "directory": ${JSON.stringify(assets)}, "binding": "ASSETS", "run_worker_first": true },
  // The edge document (key hashes, revocations, allowed origins, page membership).
  "kv_namespaces": [{ "binding": "CDSNAP_EDGE", "id": "${KV_ID_PLACEHOLDER}" }],
  "vars": {
    // Where PATCHes go: your cdsnap serve.
    "CDSNAP_ORIGIN": ${JSON.stringify(origin)}
  }
}
`;
}

function readme(name: string, out: string, doc: string): string {
  return `# ${name}: the cdsnap read API on Cloudflare Workers

Written by \`cdsnap edge init\`. The worker (\`worker.js\`, with the handler in
\`cdsnap-edge.js\`) answers every GET, HEAD and OPTIONS of the API from the
published tree at \`${out}\`, which each deploy uploads as static assets. It
checks keys against the edge document, which lives in a KV namespace so that a
revocation needs no deploy. PATCHes go to \`CDSNAP_ORIGIN\` (your \`cdsnap serve\`).

## Once

    npx wrangler login
    npx wrangler kv namespace create CDSNAP_EDGE

Put the id it prints into \`wrangler.jsonc\` (\`kv_namespaces\`), and your
origin's URL into \`CDSNAP_ORIGIN\`.

## After every build

    npx wrangler kv key put --binding CDSNAP_EDGE --remote edge.json --path ${doc}
    npx wrangler deploy

The document first: a new tree's page membership is in it.

## After \`cdsnap keys create\` or \`cdsnap keys revoke\`

Run them with \`--out ${out}\` (or run \`cdsnap edge keys --db … --out ${out}\`),
then put the document again; no deploy is needed:

    npx wrangler kv key put --binding CDSNAP_EDGE --remote edge.json --path ${doc}

KV takes up to a minute to carry a new value to every location and keeps it a
minute at each (\`CDSNAP_KV_CACHE_TTL\`), and the worker reads it again every
second: a revoked key is refused everywhere within about two minutes.

## After a PATCH sent to the origin directly

The document carries the organization file a PATCH rewrites, and \`cdsnap
serve\` writes it again before its \`--on-change\` command runs: put it from
there (\`event\` is \`patch\`, or \`access\` after a key change):

    npx wrangler kv key put --binding CDSNAP_EDGE --remote edge.json --path ${doc}

A PATCH sent through the worker is answered by that worker at once.

## Run it here first

\`cdsnap edge dev --db <database> --out ${out}\` runs this worker in the
Workers runtime on this machine.
`;
}

/** Writes the project; returns the files written. */
export async function initEdgeProject(options: EdgeInitOptions): Promise<string[]> {
  assertPublishedTree(options.out, "<database>");
  const name = options.name ?? "cdsnap-edge";
  await mkdir(options.to, { recursive: true });
  const assets = path.relative(options.to, options.out) || ".";
  const files: [string, string][] = [
    ["wrangler.jsonc", wranglerConfig(name, assets, options.origin ?? ORIGIN_PLACEHOLDER)],
    ["worker.js", EDGE_WORKER_SOURCE],
    ["README.md", readme(name, options.out, edgeDocumentFileOf(options.out))],
  ];
  const written: string[] = [];
  for (const [file, text] of files) {
    await writeFile(path.join(options.to, file), text);
    written.push(path.join(options.to, file));
  }
  const bundle = path.join(options.to, "cdsnap-edge.js");
  await copyFile(options.edgeBundle ?? fileURLToPath(new URL("./edge.js", import.meta.url)), bundle);
  written.push(bundle);
  return written;
}
