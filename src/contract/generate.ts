/**
 * Generates `schemas/`: one JSON Schema file per shape and `openapi.json`, with
 * examples read from a fresh build of the demo organization (fixed build
 * instant, so the output is reproducible). A test regenerates and compares.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileOf, type Route } from "../api-paths.js";
import { build } from "../build.js";
import { DEMO_ORG_ID, seedDemo } from "../db/demo-seed.js";
import { migrate } from "../db/migrations.js";
import { openDatabase } from "../db/open.js";
import { SHAPES, jsonSchemaOf } from "./json-schemas.js";
import { openApiDocument, type DemoExamples } from "./openapi.js";

export const DEMO_BUILD_INSTANT = new Date("2026-11-01T00:00:00Z");
const EXAMPLE_BLOCK = { id: "blk-hero", slug: "home-hero" };
const EXAMPLE_CONTENT = { id: "post-0002", slug: "sourcing-ethiopian-yirgacheffe" };

export async function demoExamples(contentDir: string): Promise<DemoExamples> {
  const dir = await mkdtemp(path.join(tmpdir(), "cdsnap-schemas-"));
  try {
    const dbFile = path.join(dir, "demo.db");
    const db = openDatabase(dbFile, { create: true });
    try {
      migrate(db);
      seedDemo(db, DEMO_BUILD_INSTANT);
    } finally {
      db.close();
    }
    const out = path.join(dir, "site");
    await build({ db: dbFile, content: contentDir, out, orgs: [DEMO_ORG_ID], now: DEMO_BUILD_INSTANT });
    const orgId = DEMO_ORG_ID;
    const read = async (route: Route) => JSON.parse(await readFile(path.join(out, fileOf(route)), "utf8")) as unknown;
    return {
      blockList: await read({ kind: "blocks", orgId }),
      block: await read({ kind: "block", orgId, id: EXAMPLE_BLOCK.id }),
      organization: await read({ kind: "organization", orgId }),
      contentList: await read({ kind: "contents", orgId }),
      contentDetail: await read({ kind: "content", orgId, id: EXAMPLE_CONTENT.id }),
      references: await read({ kind: "references", orgId, id: EXAMPLE_CONTENT.id }),
      categories: await read({ kind: "categories", orgId }),
      blockId: EXAMPLE_BLOCK.id,
      blockSlug: EXAMPLE_BLOCK.slug,
      contentId: EXAMPLE_CONTENT.id,
      contentSlug: EXAMPLE_CONTENT.slug,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const format = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Every file of `schemas/` (name → text). */
export async function generateContractFiles(contentDir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const name of Object.keys(SHAPES).sort()) files.set(`${name}.schema.json`, format(jsonSchemaOf(name)));
  files.set("openapi.json", format(openApiDocument(await demoExamples(contentDir))));
  return files;
}
