/**
 * What a command loads, in dist/ as it ships: a command registers its flags
 * with light modules only and imports its library when its action runs, so
 * `--help` costs Node and commander, not zod, YAML, marked and SQLite. Proven
 * by the modules Node loads (a loader hook records them), never by a clock.
 *
 * And what the split costs the build's cache: post files are re-rendered when
 * the hash of the build's own file changes (CODE_VERSION in src/build.ts),
 * which, split, is a chunk. Every chunk is named by its content's hash, so the
 * build's chunk changes with any chunk whose name it holds: the renderer must
 * be among them.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeFixture, makeTempDir, removeDir, removeFixture, type Fixture } from "../fixtures/build-fixture.js";
import { insertOrg, withDb } from "../fixtures/database.js";
import { postMeta, writePost } from "../fixtures/posts.js";
import { REPO_ROOT } from "../fixtures/repo.js";

const DIST = path.join(REPO_ROOT, "dist");
const ORG = "acme";
const CLI = path.join(DIST, "cli.js");

/**
 * What a command may load before its action runs: the command line, and the
 * modules it names flags and exit codes with, which import no package.
 */
const AT_START = /^(src\/cli\/|src\/errors\.ts$|src\/report\.ts$|src\/server\/rate-limit\.ts$|src\/render\/pages\.ts$|src\/on-change\/hook-runner\.ts$|package\.json$)/;

/** Records the URL of every module Node loads into the file the CLI's environment names. */
const HOOKS = `import { appendFileSync } from "node:fs";
let file;
export function initialize(data) { file = data.file; }
export async function load(url, context, next) {
  appendFileSync(file, url + "\\n");
  return next(url, context);
}
`;
/**
 * Registers the hooks; and at exit records the CommonJS modules loaded by
 * \`require\` (yaml, through createRequire), which the hooks do not see.
 */
const REGISTER = `import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { pathToFileURL } from "node:url";
register("./hooks.mjs", import.meta.url, { data: { file: process.env.LOADED_FILE } });
const required = createRequire(import.meta.url).cache;
process.on("exit", () => appendFileSync(process.env.LOADED_FILE, Object.keys(required).map((file) => pathToFileURL(file).href + "\\n").join("")));
`;

interface Loaded {
  code: number;
  /** The packages loaded, by name. */
  packages: string[];
  /** The source files (repository-relative) of the dist files loaded, from their source maps. */
  sources: string[];
}

let dir: string;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run: npm run build:cli`);
  dir = await makeTempDir("cdsnap-lazy-");
  await writeFile(path.join(dir, "hooks.mjs"), HOOKS);
  await writeFile(path.join(dir, "register.mjs"), REGISTER);
});
afterAll(() => removeDir(dir));

const sourcesCache = new Map<string, Promise<string[]>>();

/** The sources a dist file was bundled from. */
function sourcesOf(file: string): Promise<string[]> {
  let sources = sourcesCache.get(file);
  if (!sources) {
    sources = readFile(`${file}.map`, "utf8").then((map) =>
      (JSON.parse(map) as { sources: string[] }).sources.map((source) => path.relative(REPO_ROOT, path.resolve(path.dirname(file), source))),
    );
    sourcesCache.set(file, sources);
  }
  return sources;
}

async function loadedBy(args: readonly string[]): Promise<Loaded> {
  const record = path.join(dir, `loaded-${args.join("-").replace(/\W+/g, "_")}.txt`);
  await writeFile(record, "");
  const env: NodeJS.ProcessEnv = { ...process.env, LOADED_FILE: record };
  for (const name of Object.keys(env)) if (name.startsWith("CDSNAP_")) delete env[name];
  const code = await promisify(execFile)(process.execPath, ["--import", path.join(dir, "register.mjs"), CLI, ...args], { env }).then(
    () => 0,
    (error: { code?: unknown }) => {
      if (typeof error.code !== "number") throw error;
      return error.code;
    },
  );
  const urls = (await readFile(record, "utf8")).split("\n").filter((url) => url.startsWith("file:"));
  const files = urls.map((url) => fileURLToPath(url));
  const packageOf = (file: string) => /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1] ?? [];
  const distFiles = files.filter((file) => path.dirname(file) === DIST);
  const sources = new Set((await Promise.all(distFiles.map(sourcesOf))).flat());
  // A package bundled into dist (zod) is loaded when a chunk holding its sources is.
  const packages = new Set([...files.flatMap(packageOf), ...[...sources].flatMap(packageOf)]);
  return { code, packages: [...packages].sort(), sources: [...sources].sort() };
}

describe("what a command loads", () => {
  for (const args of [["--help"], ["build", "--help"], ["serve", "--help"], ["keys", "create", "--help"]]) {
    it(`${args.join(" ")} loads commander and no other package, and nothing of the library`, async () => {
      const loaded = await loadedBy(args);
      expect(loaded.code).toBe(0);
      expect(loaded.packages).toEqual(["commander"]);
      expect(loaded.sources).toContain("src/cli/main.ts");
      expect(loaded.sources.filter((source) => !AT_START.test(source))).toEqual([]);
    });
  }

  it("a build loads what it reads with, and not the file watcher, the server or the edge", async () => {
    // Fails on the missing database once the build's modules are loaded.
    const loaded = await loadedBy(["build", "--db", path.join(dir, "none.sqlite"), "--content", dir, "--out", path.join(dir, "site")]);
    expect(loaded.code).toBe(2);
    expect(loaded.sources).toContain("src/build.ts");
    expect(loaded.packages).toEqual(expect.arrayContaining(["better-sqlite3", "zod"]));
    expect(loaded.packages).not.toContain("chokidar");
    expect(loaded.packages).not.toContain("miniflare");
    expect(loaded.sources.filter((source) => /^src\/(server\/create-server|dev|edge\/node-adapter|edge\/edge-dev)\b/.test(source))).toEqual([]);
  });
});

describe("what a build parses with", () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await makeFixture();
    withDb(fx.db, (db) => insertOrg(db, { id: ORG, name: "Acme", slug: "acme" }));
    // Usual front matter and prose first, as most posts are (the demo's has a year as a number: yaml's to read).
    await writePost(fx.content, `${ORG}/usual.md`, postMeta("usual"), "Plain prose opens the post.\n");
  });
  afterAll(() => removeFixture(fx));

  it("js-yaml loads when a post is parsed; yaml and the markdown lexer only when a post needs them; none on a build of unchanged posts", async () => {
    const args = ["build", "--db", fx.db, "--content", fx.content, "--out", fx.out];
    const PARSERS = ["js-yaml", "yaml", "marked", "entities"];
    const parsers = (loaded: Loaded) => loaded.packages.filter((name) => PARSERS.includes(name));
    const first = await loadedBy(args);
    expect(first.code).toBe(0);
    expect(parsers(first)).toEqual(["js-yaml"]);
    // An anchor is yaml's to read, and a body that opens with a table is the lexer's.
    const unusual = ["---", "id: unusual", "title: &title Unusual", "slug: unusual", "status: published"];
    const rest = ["publishedAt: 2026-01-10", "authorName: Ada", "---", "| a | b |", "|---|---|", "| 1 | 2 |", "", "Then prose.", ""];
    await writeFile(path.join(fx.content, ORG, "unusual.md"), [...unusual, ...rest].join("\n"));
    const second = await loadedBy(args);
    expect(second.code).toBe(0);
    expect(parsers(second)).toEqual(PARSERS.slice().sort());
    const again = await loadedBy(args);
    expect(again.code).toBe(0);
    expect(again.packages).toEqual(expect.arrayContaining(["better-sqlite3", "zod"]));
    expect(parsers(again)).toEqual([]);
  });
});

describe("the build's code version, split into chunks", () => {
  it("is the hash of a chunk named by its content's hash, which names every chunk holding the renderer", async () => {
    const names = (await readdir(DIST)).filter((name) => name.endsWith(".js"));
    const holding = async (source: string) => {
      const found = [];
      for (const name of names) if ((await sourcesOf(path.join(DIST, name))).includes(source)) found.push(name);
      return found;
    };
    const [buildChunk, ...others] = await holding("src/build.ts");
    expect(others).toEqual([]);
    expect(buildChunk).toMatch(/^chunk-\w+\.js$/);

    // Every chunk the build's chunk names (statically or not), and every one those name, and so on.
    const reached = new Set([buildChunk!]);
    for (const name of reached) {
      const text = await readFile(path.join(DIST, name), "utf8");
      for (const [, named] of text.matchAll(/["']\.\/(chunk-\w+\.js)["']/g)) reached.add(named!);
    }
    let renderChunks = 0;
    for (const name of await readdir(path.join(REPO_ROOT, "src", "render"))) {
      for (const chunk of (await holding(`src/render/${name}`)).filter((held) => held.startsWith("chunk-"))) {
        expect(reached, `src/render/${name} is in ${chunk}`).toContain(chunk);
        renderChunks++;
      }
    }
    expect(renderChunks).toBeGreaterThan(0);
  });
});
