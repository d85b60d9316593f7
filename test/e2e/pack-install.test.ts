/**
 * The package as a newcomer gets it. The working tree is copied without dist/
 * (what a clone has, plus uncommitted work) and `npm pack`ed there, so
 * `prepare` must build every bundle and declaration from nothing; the tarball
 * is installed into an empty project whose package.json is what
 * docs/install.md tells a user to write, by a real `npm install`, whose
 * better-sqlite3 install script fetches its prebuilt binding as it would from
 * GitHub, here from a host on 127.0.0.1 that offers the binding this
 * repository's own install compiled (every CI run compiles it from source
 * twice already: the repository's install and Node 26's). Then, inside that
 * project only: `npx cdsnap` runs, creates a
 * database, builds and serves a tree; a plain .mjs file reads it through
 * `cdsnap/client`; and TypeScript under the settings docs/install.md gives
 * accepts a correct use of the client's types, rejects a wrong one, and cannot
 * find the types at all under `moduleResolution: node`, as the doc says.
 *
 * It needs only npm, so it always runs.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createReadStream } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ORG_ID } from "../../src/db/demo-seed.js";
import { clientUse, copyWorkingTree, ok, packTarball, run, STEP_TIMEOUT_MS, userEnv } from "../fixtures/pack.js";
import { REPO_ROOT } from "../fixtures/repo.js";

const TSC = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
const INSTALL_TIMEOUT_MS = 15 * 60_000;

/** The project's package.json, as docs/install.md has a user write it. */
const USER_PACKAGE = { name: "newcomer-site", private: true, type: "module", allowScripts: { "better-sqlite3": true } };

/** The project's tsconfig.json, with the settings docs/install.md says the client's types need. */
const USER_TSCONFIG = {
  compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], strict: true, noEmit: true },
  files: ["good.ts"],
};

/** `npx --yes=false`: the project's own cdsnap or a failure, never an install of some other package of that name. */
const npx = (cwd: string, ...args: string[]) => ok(cwd, "npx", ["--yes=false", "cdsnap", ...args]);

/**
 * A prebuild host for better-sqlite3 (what prebuild-install downloads from
 * GitHub, `<host>/v<version>/<name>-v<version>-node-v<abi>-<platform>-<arch>.tar.gz`)
 * offering the binding this repository's install built for this Node.
 */
async function startPrebuildHost(into: string): Promise<{ url: string; asked: string[]; server: Server }> {
  const sqlite = path.join(REPO_ROOT, "node_modules", "better-sqlite3");
  const { version } = JSON.parse(await readFile(path.join(sqlite, "package.json"), "utf8")) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await mkdir(path.join(into, `v${version}`), { recursive: true });
  await ok(sqlite, "tar", ["-czf", path.join(into, `v${version}`, name), "build/Release/better_sqlite3.node"]);
  const asked: string[] = [];
  const server = createServer((req, res) => {
    asked.push(req.url ?? "");
    if (req.url !== `/v${version}/${name}`) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/gzip" });
    createReadStream(path.join(into, `v${version}`, name)).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked, server };
}

let dir: string;
let project: string;
let prebuildHost: Awaited<ReturnType<typeof startPrebuildHost>> | undefined;
let tarballFiles: string[];
let server: ChildProcess | undefined;
let serverUrl: string;
let readKey: string;

/** Starts `cdsnap serve` through the project's bin link and waits for the line with its address. */
function serve(): Promise<string> {
  const child = spawn(path.join(project, "node_modules", ".bin", "cdsnap"), ["serve", "--db", "site.db", "--content", "content", "--out", "site", "--port", "0"], {
    cwd: project,
    env: userEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  server = child;
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`cdsnap serve printed no address within 30 s\n${out}\n${err}`)), 30_000);
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /cdsnap serving (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`cdsnap serve exited ${code}\n${out}\n${err}`));
    });
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-pack-"));
  const source = path.join(dir, "source");
  const packed = path.join(dir, "packed");
  project = path.join(dir, "project");
  await mkdir(packed);
  await mkdir(project);

  await copyWorkingTree(source);
  const tgz = await packTarball(source, packed);
  tarballFiles = (await ok(packed, "tar", ["-tzf", tgz])).split("\n").filter(Boolean);

  await writeFile(path.join(project, "package.json"), `${JSON.stringify(USER_PACKAGE, null, 2)}\n`);
  prebuildHost = await startPrebuildHost(path.join(dir, "prebuilds"));
  await ok(project, "npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tgz], INSTALL_TIMEOUT_MS, {
    npm_config_better_sqlite3_binary_host_mirror: prebuildHost.url,
  });
}, INSTALL_TIMEOUT_MS + 5 * 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (prebuildHost ? prebuildHost.server.close(() => resolve()) : resolve()));
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the npm pack tarball", () => {
  it("ships the bundles, their declarations and the schemas, and nothing only this repository uses", async () => {
    const files = tarballFiles.map((name) => name.replace(/^package\//, ""));
    for (const shipped of ["dist/cli.js", "dist/index.js", "dist/client.js", "dist/edge.js", "dist/parse-worker.js", "dist/types/index.d.ts", "dist/types/client/index.d.ts", "dist/types/edge/index.d.ts", "schemas/openapi.json", "README.md"]) {
      expect(files).toContain(shipped);
    }
    // The code the entry points share, or import only when a command runs, is in chunks beside them: every one ships.
    const chunks = (await readdir(path.join(dir, "source", "dist"))).filter((name) => name.startsWith("chunk-")).map((name) => `dist/${name}`);
    expect(chunks.length).toBeGreaterThan(0);
    expect(files).toEqual(expect.arrayContaining(chunks));
    // The demo's posts ship, so that `npx cdsnap demo` works outside a clone.
    expect(files.filter((name) => name.startsWith("content/")).length).toBeGreaterThan(0);
    expect(files.filter((name) => /^(dist\/(tools|bench)|src|test|bench|scripts)\//.test(name))).toEqual([]);
  });
});

describe("installed into an empty project", () => {
  it("ran better-sqlite3's install script (allowScripts), which fetched its prebuilt binding", () => {
    expect(prebuildHost!.asked).toEqual([expect.stringMatching(/^\/v[\d.]+\/better-sqlite3-v[\d.]+-node-v\d+-linux-x64\.tar\.gz$/)]);
  });

  it("npx cdsnap --help lists the commands", async () => {
    const help = await npx(project, "--help");
    expect(help).toMatch(/^Usage: cdsnap/);
    for (const command of ["build", "serve", "db", "keys"]) expect(help).toMatch(new RegExp(`^\\s+${command}\\b`, "m"));
  }, STEP_TIMEOUT_MS);

  it("npx cdsnap db migrate creates a database with the contract's tables", async () => {
    await npx(project, "db", "migrate", "--db", "site.db");
    const db = new Database(path.join(project, "site.db"), { readonly: true });
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      expect(tables).toEqual(expect.arrayContaining(["organizations", "api_keys", "blocks"]));
    } finally {
      db.close();
    }
  }, STEP_TIMEOUT_MS);

  it("npx cdsnap demo builds the shipped demo and serves it, and its printed curl line works", async () => {
    const child = spawn(path.join(project, "node_modules", ".bin", "cdsnap"), ["demo"], {
      cwd: project,
      env: { ...userEnv(), CDSNAP_PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const printed = await new Promise<string>((resolve, reject) => {
        let out = "";
        let err = "";
        const timer = setTimeout(() => reject(new Error(`cdsnap demo printed no curl line within 60 s\n${out}\n${err}`)), 60_000);
        child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (/^\s+curl .*\/contents$/m.test(out)) {
            clearTimeout(timer);
            resolve(out);
          }
        });
        child.on("exit", (code) => {
          clearTimeout(timer);
          reject(new Error(`cdsnap demo exited ${code}\n${out}\n${err}`));
        });
      });
      const [, key, url] = /^\s+curl -H 'x-api-key: (\S+)' (\S+\/contents)$/m.exec(printed) ?? [];
      const res = await fetch(url!, { headers: { "x-api-key": key! } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { items: unknown[] }).items.length).toBeGreaterThan(0);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  }, STEP_TIMEOUT_MS);

  it("a .mjs file reads a tree that npx cdsnap built and serves, through cdsnap/client", async () => {
    await npx(project, "db", "seed-demo", "--db", "site.db");
    readKey = (JSON.parse(await npx(project, "keys", "create", "--db", "site.db", "--org", DEMO_ORG_ID, "--json")) as { key: string }).key;
    await cp(path.join(REPO_ROOT, "content"), path.join(project, "content"), { recursive: true });
    await npx(project, "build", "--db", "site.db", "--content", "content", "--out", "site", "--quiet");
    serverUrl = await serve();

    await writeFile(
      path.join(project, "read.mjs"),
      `import { createClient, CdsnapApiError } from "cdsnap/client";
const [baseUrl, apiKey, orgId] = process.argv.slice(2);
const cms = createClient({ baseUrl, apiKey, orgId });
const contents = await cms.contents();
const first = await cms.content(contents.items[0].id);
const refused = await createClient({ baseUrl, apiKey: "not-a-key", orgId }).organization().catch((e) => e);
console.log(JSON.stringify({ contents, first, refused: refused instanceof CdsnapApiError ? [refused.status, refused.code] : String(refused) }));
`,
    );
    const read = JSON.parse(await ok(project, process.execPath, ["read.mjs", serverUrl, readKey, DEMO_ORG_ID])) as {
      contents: { items: { id: string }[] };
      first: { id: string };
      refused: unknown;
    };

    const served = async (apiPath: string) => {
      const res = await fetch(`${serverUrl}/api/organizations/${DEMO_ORG_ID}${apiPath}`, { headers: { "x-api-key": readKey } });
      expect(res.status).toBe(200);
      return res.json();
    };
    expect(read.contents.items.length).toBeGreaterThan(0);
    expect(read.contents).toEqual(await served("/contents"));
    expect(read.first).toEqual(await served(`/contents/${read.contents.items[0]?.id}`));
    expect(read.refused).toEqual([401, "unauthorized"]);
  }, STEP_TIMEOUT_MS);

  describe("the client's types, checked by tsc with the project's tsconfig.json", () => {
    beforeAll(async () => {
      await writeFile(path.join(project, "tsconfig.json"), `${JSON.stringify(USER_TSCONFIG, null, 2)}\n`);
      await writeFile(
        path.join(project, "good.ts"),
        clientUse("cdsnap/client"),
      );
      await writeFile(
        path.join(project, "bad.ts"),
        `import { createClient, type ContentSummary } from "cdsnap/client";

const cms = createClient({ baseUrl: "https://cdn.example.com", apiKey: "key", orgId: "demo" });
export const misspelt = (post: ContentSummary): string => post.titel;
export const notAList = () => cms.blocks({ pages: "home" });
`,
      );
      await writeFile(path.join(project, "tsconfig.bad.json"), JSON.stringify({ extends: "./tsconfig.json", files: ["bad.ts"] }));
      await writeFile(
        path.join(project, "tsconfig.node10.json"),
        JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { module: "esnext", moduleResolution: "node" } }),
      );
    });

    it("accept a correct use, with the package's declarations checked too (no skipLibCheck)", async () => {
      const result = await run(project, process.execPath, [TSC, "-p", "tsconfig.json"]);
      expect(result.stdout + result.stderr).toBe("");
      expect(result.code).toBe(0);
    }, STEP_TIMEOUT_MS);

    it("reject a wrong property and a wrong argument: the types are not any", async () => {
      const result = await run(project, process.execPath, [TSC, "-p", "tsconfig.bad.json"]);
      expect(result.code).not.toBe(0);
      expect(result.stdout).toMatch(/bad\.ts\(4,\d+\): error TS2551: Property 'titel' does not exist on type '[^']*'. Did you mean 'title'\?/);
      expect(result.stdout).toMatch(/bad\.ts\(5,\d+\): error TS2322: Type 'string' is not assignable to type 'readonly string\[\]'/);
      expect(result.stdout.trim().split("\n").filter((line) => /error TS/.test(line))).toHaveLength(2);
    }, STEP_TIMEOUT_MS);

    it("are not found under moduleResolution node, which ignores package exports", async () => {
      const result = await run(project, process.execPath, [TSC, "-p", "tsconfig.node10.json"]);
      expect(result.code).not.toBe(0);
      expect(result.stdout).toMatch(/good\.ts\(1,\d+\): error TS2307: Cannot find module 'cdsnap\/client'/);
    }, STEP_TIMEOUT_MS);
  });
});
