import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import fg from "fast-glob";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routeOfFile, type RouteKind } from "../../src/api-paths.js";
import { build } from "../../src/build.js";
import { generateContractFiles } from "../../src/contract/generate.js";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, seedDemo } from "../../src/db/demo-seed.js";
import { migrate } from "../../src/db/migrations.js";
import { openDatabase } from "../../src/db/open.js";
import { startServer, type RunningServer } from "../../src/server/create-server.js";

const root = path.resolve(import.meta.dirname, "../..");
const schemasDir = path.join(root, "schemas");

const SUCCESS_SHAPE: Record<Exclude<RouteKind, "businessDescription" | "businessOffers">, string> = {
  blocks: "BlockList",
  block: "Block",
  blockBySlug: "Block",
  organization: "Organization",
  contents: "ContentList",
  contentsPage: "ContentPage",
  categoryContentsPage: "ContentPage",
  content: "ContentDetail",
  contentBySlug: "ContentDetail",
  references: "ReferenceList",
  categories: "CategoryList",
};

async function loadAjv() {
  const ajv = new Ajv2020.default({ strict: true, allErrors: true });
  addFormats.default(ajv);
  for (const name of await readdir(schemasDir)) {
    if (name.endsWith(".schema.json")) ajv.addSchema(JSON.parse(await readFile(path.join(schemasDir, name), "utf8")));
  }
  return (shape: string, data: unknown) => {
    const validate = ajv.getSchema(`urn:cdsnap:schemas:${shape}`);
    if (!validate) throw new Error(`no schema ${shape}`);
    return validate(data) ? null : ajv.errorsText(validate.errors);
  };
}

describe("the contract artifacts", () => {
  it("the committed schemas/ are exactly what `npm run schemas` generates", async () => {
    const generated = await generateContractFiles(path.join(root, "content"));
    const committed = (await readdir(schemasDir)).sort();
    expect(committed).toEqual([...generated.keys()].sort());
    for (const [name, text] of generated) {
      expect(await readFile(path.join(schemasDir, name), "utf8"), `schemas/${name} is stale: run npm run schemas`).toBe(text);
    }
  });
});

describe("an independent validator (ajv) agrees with what is built and served", () => {
  let dir: string;
  let out: string;
  let server: RunningServer;
  let check: Awaited<ReturnType<typeof loadAjv>>;

  beforeAll(async () => {
    check = await loadAjv();
    dir = await mkdtemp(path.join(tmpdir(), "cdsnap-contract-"));
    const dbFile = path.join(dir, "db.sqlite");
    const db = openDatabase(dbFile, { create: true });
    migrate(db);
    seedDemo(db);
    db.close();
    out = path.join(dir, "site");
    await build({ db: dbFile, content: path.join(root, "content"), out });
    server = await startServer({ db: dbFile, out, port: 0, log: () => undefined, writeRate: 1000 });
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("every file of the built demo tree validates against its JSON Schema", async () => {
    const files = await fg("**/*.json", { cwd: out, followSymbolicLinks: true });
    expect(files.length).toBeGreaterThan(50);
    for (const rel of files) {
      const route = routeOfFile(rel);
      expect(route, rel).not.toBeNull();
      const shape = SUCCESS_SHAPE[route!.kind as keyof typeof SUCCESS_SHAPE];
      expect(check(shape, JSON.parse(await readFile(path.join(out, rel), "utf8"))), rel).toBeNull();
    }
  });

  it("every endpoint's answers, success and error, validate against the schemas", async () => {
    const base = `${server.url}/api/organizations/demo`;
    const get = (p: string, key = DEMO_READ_KEY) => fetch(`${base}${p}`, { headers: { "x-api-key": key } });
    const patch = (p: string, body: string, key = DEMO_WRITE_KEY, type = "application/json") =>
      fetch(`${base}${p}`, { method: "PATCH", headers: { "x-api-key": key, "content-type": type }, body });
    const cases: [Promise<Response>, number, string][] = [
      [get("/blocks"), 200, "BlockList"],
      [get("/blocks?pages=home"), 200, "BlockList"],
      [get("/blocks/blk-hero"), 200, "Block"],
      [get("/blocks/by-slug/home-hero"), 200, "Block"],
      [get("/organization"), 200, "Organization"],
      [get("/contents"), 200, "ContentList"],
      [get("/contents/post-0002"), 200, "ContentDetail"],
      [get("/contents/by-slug/sourcing-ethiopian-yirgacheffe"), 200, "ContentDetail"],
      [get("/contents/post-0002/references"), 200, "ReferenceList"],
      [get("/contents/post-0001/references"), 200, "ReferenceList"],
      [get("/categories"), 200, "CategoryList"],
      [patch("/business-description", JSON.stringify({ businessDescription: " New text " })), 200, "BusinessDescriptionResponse"],
      [patch("/business-offers", JSON.stringify({ businessOffers: [{ name: "A", description: "B", link: null }] })), 200, "BusinessOffersResponse"],
      [get("/blocks/nope"), 404, "Error"],
      [get("/blocks", "wrong"), 401, "Error"],
      [fetch(`${server.url}/api/organizations/harbor/blocks`, { headers: { "x-api-key": DEMO_READ_KEY } }), 403, "Error"],
      [patch("/business-offers", "{}", DEMO_READ_KEY), 403, "Error"],
      [fetch(`${base}/blocks`, { method: "POST", headers: { "x-api-key": DEMO_READ_KEY } }), 405, "Error"],
      [patch("/business-offers", "{", DEMO_WRITE_KEY), 400, "Error"],
      [patch("/business-offers", "{}", DEMO_WRITE_KEY, "text/plain"), 415, "Error"],
      [patch("/business-offers", JSON.stringify({ businessOffers: [{ name: "x".repeat(70_000) }] })), 413, "Error"],
      [patch("/business-offers", JSON.stringify({ businessOffers: [{ name: "A", description: "B", link: "javascript:x" }] })), 422, "Error"],
    ];
    for (const [pending, status, shape] of cases) {
      const res = await pending;
      expect(res.status, res.url).toBe(status);
      expect(check(shape, await res.json()), `${res.url} ${status}`).toBeNull();
    }
  });
});
