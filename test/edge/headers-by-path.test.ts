/**
 * Headers by path, bytes by content: many files of a tree hold the same bytes
 * (every post without references has `[]`, a block answers the same JSON by id
 * and by slug), and the readers remember files by their bytes. Every file of
 * the demo tree is asked in a random order, twice, through `cdsnap serve`, the
 * edge handler under Node and the edge handler in workerd; each answer's
 * `Cache-Tag`, `ETag` and `Last-Modified` must be those of its own path,
 * whichever path with the same bytes was asked before it.
 */
import { createHash } from "node:crypto";
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mulberry32, type Rng } from "../../bench/prng.js";
import { DEMO_READ_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { edgeDocumentFileOf } from "../../src/edge/publish-document.js";
import { send } from "../fixtures/edge.js";
import { startEdgeSite, type EdgeSite } from "../fixtures/edge-site.js";
import { listFiles } from "../fixtures/tree.js";

const KEYS: Record<string, string> = { demo: DEMO_READ_KEY, harbor: HARBOR_READ_KEY };

let site: EdgeSite;

beforeAll(async () => {
  site = await startEdgeSite();
  // The document is written after the tree, often a second later: then too a
  // file of the tree is answered with its own time, where the document only
  // repeats its bytes.
  const file = edgeDocumentFileOf(site.fx.out);
  const document = JSON.parse(await readFile(file, "utf8")) as { writtenAt: string };
  document.writtenAt = new Date(Date.now() + 60_000).toISOString();
  await writeFile(file, JSON.stringify(document));
}, 60_000);

afterAll(() => site?.close());

interface TreeFile {
  /** The API path the file answers. */
  apiPath: string;
  orgId: string;
  bytes: Buffer;
  mtime: Date;
}

/** Every file of the live tree that answers an API path, read from disk. */
async function treeFiles(): Promise<TreeFile[]> {
  const files: TreeFile[] = [];
  for (const rel of await listFiles(site.fx.out)) {
    const match = /^api\/organizations\/([^/]+)\/.+\.json$/.exec(rel);
    if (!match) continue;
    const file = path.join(site.fx.out, rel);
    files.push({ apiPath: `/${rel.slice(0, -".json".length)}`, orgId: match[1]!, bytes: await readFile(file), mtime: (await stat(file)).mtime });
  }
  return files;
}

/**
 * The tags docs/api.md promises for a path, spelled out here: `org:<org>`
 * always; a list or the organization its collection; one block
 * `block:<org>/<id>`; one post or its references `content:<org>/<id>`, and a
 * post its category too; a page of a list names that page. The id of a by-slug
 * answer is the one its body holds.
 */
function expectedTags(file: TreeFile): string {
  const rest = file.apiPath.slice(`/api/organizations/${file.orgId}/`.length);
  const org = file.orgId;
  const json = JSON.parse(file.bytes.toString("utf8")) as { id?: string; categorySlug?: string | null };
  const collection = /^(organization|blocks|categories|contents)$/.exec(rest);
  if (collection) return `org:${org},${collection[1]}:${org}`;
  if (/^blocks\/(by-slug\/)?[^/]+$/.test(rest)) return `org:${org},block:${org}/${json.id}`;
  const page = /^contents\/page\/([0-9]+)$/.exec(rest);
  if (page) return `org:${org},contentsPage:${org}/${page[1]}`;
  const categoryPage = /^categories\/([^/]+)\/contents\/page\/([0-9]+)$/.exec(rest);
  if (categoryPage) return `org:${org},categoryContentsPage:${org}/${categoryPage[1]}/${categoryPage[2]}`;
  const references = /^contents\/([^/]+)\/references$/.exec(rest);
  if (references) return `org:${org},content:${org}/${references[1]}`;
  if (/^contents\/(by-slug\/)?[^/]+$/.test(rest)) {
    return [`org:${org}`, `content:${org}/${json.id}`, ...(json.categorySlug ? [`category:${org}/${json.categorySlug}`] : [])].join(",");
  }
  throw new Error(`no Cache-Tag rule for ${file.apiPath}: add one from docs/api.md`);
}

function shuffled<T>(items: readonly T[], random: Rng): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("every answer's Cache-Tag, ETag and Last-Modified are its own path's, whatever was asked before", () => {
  it("the demo tree has paths of different items holding the same bytes (what the readers must not confuse)", async () => {
    const byBytes = new Map<string, Set<string>>();
    for (const file of await treeFiles()) {
      const tags = expectedTags(file);
      const set = byBytes.get(sha256(file.bytes)) ?? new Set();
      byBytes.set(sha256(file.bytes), set.add(tags));
    }
    expect(Math.max(...[...byBytes.values()].map((tags) => tags.size))).toBeGreaterThanOrEqual(3);
  });

  for (const target of ["serve", "node", "workerd"] as const) {
    it(`${target}: every file in two random orders`, async () => {
      const base = { serve: site.origin.url, node: site.node.url, workerd: site.workerd.url }[target];
      const files = await treeFiles();
      const random = mulberry32(20261126 + target.length);
      // Static assets carry no file time: in workerd every answer has the deployment's one.
      const workerdTimes = new Set<string>();
      for (const round of [1, 2]) {
        for (const file of shuffled(files, random)) {
          const seen = await send(base, file.apiPath, { headers: { "x-api-key": KEYS[file.orgId]! } });
          const where = `${target}, round ${round}: ${file.apiPath}`;
          expect(seen.status, where).toBe(200);
          expect(seen.headers["cache-tag"], where).toBe(expectedTags(file));
          expect(seen.headers["etag"], where).toBe(`"${sha256(file.bytes)}"`);
          if (target === "workerd") workerdTimes.add(seen.headers["last-modified"]!);
          else expect(seen.headers["last-modified"], where).toBe(file.mtime.toUTCString());
        }
      }
      if (target === "workerd") expect(workerdTimes.size).toBe(1);
    }, 120_000);
  }
});
