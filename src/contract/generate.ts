/**
 * Generates `schemas/`: one JSON Schema file per shape and `openapi.json`, with
 * examples read from a fresh build of the demo organization (fixed build
 * instant, so the output is reproducible). A test regenerates and compares.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileOf, type Route } from "../api-paths.js";
import { ROUTES, ROUTE_KINDS, itemRoute } from "../route-table.js";
import { build } from "../build.js";
import { DEMO_ORG_ID, seedDemo } from "../db/demo-seed.js";
import { migrate } from "../db/migrations.js";
import { openDatabase } from "../db/open.js";
import { SHAPES } from "../model/shapes.js";
import { jsonSchemaOf } from "./json-schemas.js";
import { openApiDocument, type DemoExamples } from "./openapi.js";

export const DEMO_BUILD_INSTANT = new Date("2026-11-01T00:00:00Z");
const EXAMPLE_ITEMS = {
  block: { id: "blk-hero", slug: "home-hero" },
  post: { id: "post-0002", slug: "sourcing-ethiopian-yirgacheffe" },
} as const;
/** A page's example: page 2 of 4 posts a page, so `next` and `prev` both show a number; the category's has its page 1 only. */
const EXAMPLE_PAGE = { pageSize: 4, page: "2", category: "roasting" } as const;

/** Each route's answer in a fresh build of the demo; a PATCH's is the organization's current value. */
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
    await build({ db: dbFile, content: contentDir, out, orgs: [DEMO_ORG_ID], now: DEMO_BUILD_INSTANT, pageSize: EXAMPLE_PAGE.pageSize });
    const read = async (route: Route) => JSON.parse(await readFile(path.join(out, fileOf(route)), "utf8")) as Record<string, unknown>;
    const organization = await read({ kind: "organization", orgId: DEMO_ORG_ID });
    const examples: Partial<DemoExamples> = {};
    for (const kind of ROUTE_KINDS) {
      const { access, entity } = ROUTES[kind];
      if (access === "write") {
        // A PATCH's body has one member, the organization's member the route is named after.
        examples[kind] = { [kind]: organization[kind] };
      } else if (ROUTES[kind].role === "page") {
        const page = kind === "contentsPage" ? EXAMPLE_PAGE.page : "1";
        examples[kind] = await read({ kind, orgId: DEMO_ORG_ID, slug: EXAMPLE_PAGE.category, page } as Route);
      } else {
        const item = entity === "block" || entity === "post" ? EXAMPLE_ITEMS[entity] : { id: "", slug: "" };
        examples[kind] = await read(itemRoute(kind, DEMO_ORG_ID, item));
      }
    }
    return examples as DemoExamples;
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
