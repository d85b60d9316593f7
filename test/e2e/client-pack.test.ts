/**
 * `@cdsnap/client` as a frontend developer gets it: the working tree copied
 * as a clone has it, `npm pack -w packages/client` there (its `prepack` builds
 * the bundle and the one declaration file from nothing), and the tarball
 * installed into an empty project. The install brings nothing else (no
 * dependency, no install script, no native build); a plain .mjs reads a live
 * `cdsnap serve` through it, conditional request included; and TypeScript
 * checks a use of its types under the settings docs/frontends.md gives, with
 * the TypeScript `npm install typescript` gets today and the oldest one
 * supported, each installed beside the project, not into it.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ORG_ID, DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { clientUse, copyWorkingTree, ok, packTarball, PACK_TIMEOUT_MS, run, STEP_TIMEOUT_MS } from "../fixtures/pack.js";
import { REPO_ROOT } from "../fixtures/repo.js";
import { startSite, type StartedSite } from "../fixtures/served-site.js";

/** The TypeScript lines the client's declarations are tried with: what npm installs today, and the oldest supported. */
const TYPESCRIPTS = { current: "latest", oldest: "5.0.4" } as const;

const FRONTENDS = path.join(REPO_ROOT, "docs/frontends.md");

/** The code block right after `<!-- frontends-check: NAME -->` on docs/frontends.md: what the page tells a reader to write. */
async function pageBlock(name: string): Promise<string> {
  const page = await readFile(FRONTENDS, "utf8");
  const match = new RegExp(`^<!-- frontends-check: ${name.replace(/\./g, "\\.")} -->\\n(\`{3,})\\w*\\n([\\s\\S]*?)\\n\\1$`, "m").exec(page);
  if (!match) throw new Error(`docs/frontends.md has no code block marked frontends-check: ${name}`);
  return `${match[2]}\n`;
}

let dir: string;
let project: string;
let tarballFiles: string[];
let packed: Record<string, unknown>;
let installMs: number;
let site: StartedSite;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-client-pack-"));
  const source = path.join(dir, "source");
  const packs = path.join(dir, "packed");
  project = path.join(dir, "project");
  await mkdir(packs);
  await mkdir(project);
  await copyWorkingTree(source);
  const tgz = await packTarball(source, packs, "client");
  tarballFiles = (await ok(packs, "tar", ["-tzf", tgz])).split("\n").filter(Boolean);
  packed = JSON.parse(await ok(packs, "tar", ["-xzOf", tgz, "package/package.json"])) as Record<string, unknown>;

  await writeFile(path.join(project, "package.json"), `${JSON.stringify({ name: "frontend", private: true, type: "module" }, null, 2)}\n`);
  const started = performance.now();
  await ok(project, "npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tgz], STEP_TIMEOUT_MS);
  installMs = performance.now() - started;
  console.log(`@cdsnap/client: npm install of the tarball into an empty project took ${(installMs / 1000).toFixed(1)} s`);
  site = await startSite();
}, PACK_TIMEOUT_MS + 2 * STEP_TIMEOUT_MS);

afterAll(async () => {
  await site?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the @cdsnap/client tarball", () => {
  it("holds the bundle, its map and one declaration file, and names no dependency and no install script", () => {
    expect(tarballFiles.map((name) => name.replace(/^package\//, "")).sort()).toEqual(["dist/index.d.ts", "dist/index.js", "dist/index.js.map", "package.json", "README.md"].sort());
    expect(packed).toMatchObject({ name: "@cdsnap/client", type: "module" });
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies", "bundleDependencies"]) expect(packed[field]).toBeUndefined();
    const scripts = Object.keys((packed.scripts ?? {}) as Record<string, string>);
    expect(scripts.filter((name) => /^(pre|post)?install$|^prepare$/.test(name))).toEqual([]);
  });

  it("installs alone: the project's node_modules holds the client and nothing else", async () => {
    const installed = (await readdir(path.join(project, "node_modules"))).filter((name) => !name.startsWith("."));
    expect(installed).toEqual(["@cdsnap"]);
    expect(await readdir(path.join(project, "node_modules", "@cdsnap"))).toEqual(["client"]);
    const lock = JSON.parse(await readFile(path.join(project, "package-lock.json"), "utf8")) as { packages: Record<string, unknown> };
    expect(Object.keys(lock.packages).sort()).toEqual(["", "node_modules/@cdsnap/client"]);
  });

  it("declares its types in one file that imports nothing", async () => {
    const declarations = await readFile(path.join(project, "node_modules", "@cdsnap", "client", "dist", "index.d.ts"), "utf8");
    expect(declarations).not.toMatch(/^\s*import\b|\bimport\(|from\s+["']/m);
    expect(declarations).toMatch(/export declare function createClient\(/);
  });
});

describe("installed into an empty project", () => {
  it("a .mjs file reads a live serve, and a conditional read of the same post gets NotModified", async () => {
    await writeFile(
      path.join(project, "read.mjs"),
      `import { createClient, isNotModified } from "@cdsnap/client";
const [baseUrl, apiKey, orgId] = process.argv.slice(2);
const cms = createClient({ baseUrl, apiKey, orgId });
const { items } = await cms.contents();
const first = await cms.withMeta.content(items[0].id);
const again = await cms.content(items[0].id, { ifNoneMatch: first.meta.etag });
console.log(JSON.stringify({ id: first.data.id, title: first.data.title, tags: first.meta.cacheTags, notModified: isNotModified(again) }));
`,
    );
    const read = JSON.parse(await ok(project, process.execPath, ["read.mjs", site.url, DEMO_READ_KEY, DEMO_ORG_ID])) as Record<string, unknown>;
    const res = await fetch(`${site.url}/api/organizations/${DEMO_ORG_ID}/contents/${read.id as string}`, { headers: { "x-api-key": DEMO_READ_KEY } });
    const served = (await res.json()) as { title: string };
    expect(read).toEqual({ id: read.id, title: served.title, tags: res.headers.get("cache-tag")!.split(","), notModified: true });
  }, STEP_TIMEOUT_MS);

  describe.each(Object.entries(TYPESCRIPTS))("TypeScript %s", (line, version) => {
    let tsc: string;
    let tscVersion: string;
    beforeAll(async () => {
      // Beside the project, not in it: the project itself stays dependency-free.
      const tools = path.join(dir, `typescript-${line}`);
      await mkdir(tools);
      await writeFile(path.join(tools, "package.json"), "{}\n");
      await ok(tools, "npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", `typescript@${version}`], STEP_TIMEOUT_MS);
      tsc = path.join(tools, "node_modules", ".bin", "tsc");
      tscVersion = (await ok(project, tsc, ["--version"])).trim();
      console.log(`@cdsnap/client types checked with ${tscVersion} (${line})`);
      // The page's tsconfig.json, and its shared module for Nuxt and SvelteKit, as a reader would copy them.
      const tsconfig = JSON.parse(await pageBlock("tsconfig.json")) as Record<string, unknown>;
      await writeFile(path.join(project, "tsconfig.json"), `${JSON.stringify({ ...tsconfig, files: ["good.ts", "cms.ts"] }, null, 2)}\n`);
      await writeFile(path.join(project, "cms.ts"), await pageBlock("cms.ts"));
      await writeFile(
        path.join(project, "good.ts"),
        `${clientUse("@cdsnap/client", ["isNotModified", "type ContentDetail", "type NotModified"])}export async function refresh(kept: { etag: string; post: ContentDetail }): Promise<ContentDetail> {
  const answer: ContentDetail | NotModified = await cms.content(kept.post.id, { ifNoneMatch: kept.etag });
  if (isNotModified(answer)) return kept.post;
  return answer;
}
export async function sync(id: string, etag?: string): Promise<string | null> {
  const answer = await cms.withMeta.content(id, { ifNoneMatch: etag });
  return answer.notModified ? etag ?? null : answer.meta.etag;
}
`,
      );
      await writeFile(
        path.join(project, "bad.ts"),
        `import { createClient, type ContentDetail, type ContentSummary } from "@cdsnap/client";

const cms = createClient({ baseUrl: "https://cdn.example.com", apiKey: "key", orgId: "demo" });
export const misspelt = (post: ContentSummary): string => post.titel;
export const maybeStale = async (etag: string): Promise<ContentDetail> => cms.content("x", { ifNoneMatch: etag });
`,
      );
      await writeFile(path.join(project, "tsconfig.bad.json"), JSON.stringify({ extends: "./tsconfig.json", files: ["bad.ts"] }));
    }, 2 * STEP_TIMEOUT_MS);

    it("accepts a correct use, with the package's declarations checked too (no skipLibCheck)", async () => {
      expect(tscVersion).toMatch(line === "oldest" ? /^Version 5\.0\./ : /^Version \d+\./);
      const result = await run(project, tsc, ["-p", "tsconfig.json"]);
      expect(result.stdout + result.stderr).toBe("");
      expect(result.code).toBe(0);
    }, STEP_TIMEOUT_MS);

    it("rejects a misspelt member, and data used where a conditional read may be NotModified: the types are not any", async () => {
      const result = await run(project, tsc, ["-p", "tsconfig.bad.json"]);
      expect(result.code).not.toBe(0);
      const errors = result.stdout.split("\n").filter((row) => /error TS\d+/.test(row));
      // `bad.ts(4,59): error` from tsc 5, `bad.ts:4:59 - error` from the native tsc 7.
      expect(errors.map((row) => /bad\.ts[(:](\d+)[,:]\d+/.exec(row)?.[1])).toEqual(["4", "5"]);
      expect(errors[0]).toMatch(/'titel'/);
      expect(errors[1]).toMatch(/NotModified/);
    }, STEP_TIMEOUT_MS);
  });
});
