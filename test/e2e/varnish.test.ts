/**
 * A real Varnish (Debian's `varnish` with `varnish-modules` for xkey) in front
 * of the real `cdsnap serve`, set up exactly as docs/cdn.md says: its VCL and
 * its purge hook are read from the page. Proves that the cache serves repeated
 * reads without the origin and keeps keys apart (Vary), and that with
 * `--on-change` a PATCH, a build's edit and a key's revocation are seen through
 * the cache as soon as their hook has run -- while a hook that hangs or fails
 * never holds up or fails the PATCH.
 *
 * Without varnishd, jq or curl the test is skipped on a developer machine
 * (saying so) and fails in CI (`CI` or `CDSNAP_E2E_REQUIRED` set): `.ci/run`
 * installs them.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { get } from "node:http";
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { treeStoreOf } from "../../src/emit/tree-store.js";
import { makeFixture, removeFixture, type Fixture } from "../fixtures/build-fixture.js";
import { buildArgs, cliPath, runCli } from "../fixtures/cli.js";
import { makeGate, openGate, shellQuote } from "../fixtures/hook.js";
import { api, freePort, patchJson } from "../fixtures/http.js";
import { REPO_ROOT } from "../fixtures/repo.js";
import { withDb } from "../fixtures/database.js";
import { pathExists } from "../fixtures/tree.js";
import { startCliServer, stopCliServer, type CliServer } from "../fixtures/served-site.js";
import { pollUntil } from "../fixtures/wait.js";

const REQUIRED = Boolean(process.env.CI || process.env.CDSNAP_E2E_REQUIRED);
const has = (shell: string) => spawnSync("sh", ["-c", shell]).status === 0;
const MISSING = [
  ...["varnishd", "jq", "curl"].filter((tool) => !has(`command -v ${tool}`)),
  ...(has("ls /usr/lib/*/varnish/vmods/libvmod_xkey.so /usr/lib/varnish/vmods/libvmod_xkey.so 2>/dev/null | grep -q .") ? [] : ["xkey (varnish-modules)"]),
];
if (MISSING.length > 0 && !REQUIRED) {
  console.warn(`varnish test skipped: ${MISSING.join(", ")} missing (apt-get install varnish varnish-modules jq curl); CI runs it`);
}

const PAGE = path.join(REPO_ROOT, "docs/cdn.md");

/** The code block right after `<!-- cdn-test: NAME -->` on docs/cdn.md. */
function docBlock(markdown: string, name: string): string {
  const match = new RegExp(`^<!-- cdn-test: ${name.replace(/\./g, "\\.")} -->\\n(\`{3,})\\w*\\n([\\s\\S]*?)\\n\\1$`, "m").exec(markdown);
  if (!match) throw new Error(`docs/cdn.md has no code block marked cdn-test: ${name}`);
  return `${match[2]}\n`;
}

/** The flags the page starts `serve` with, besides where its files are and the hook. */
function documentedServeFlags(markdown: string): string[] {
  const line = markdown.split("\n").find((l) => l.includes("npx cdsnap serve "));
  if (!line) throw new Error("docs/cdn.md starts no cdsnap serve");
  const words = line.slice(line.indexOf("npx cdsnap serve ") + "npx cdsnap serve ".length).split(/\s+/);
  const flags: string[] = [];
  for (let i = 0; i < words.length; i += 2) {
    if (!["--db", "--content", "--out", "--on-change"].includes(words[i]!)) flags.push(words[i]!, words[i + 1]!);
  }
  return flags;
}

/** A GET sent from `localAddress` (any of 127/8 on Linux), so Varnish sees another visitor. */
function readFrom(localAddress: string, url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = get(url, { localAddress, headers: { "x-api-key": key } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
  });
}

interface Read {
  status: number;
  body: string;
  /** Varnish's `X-Varnish`: one id for an answer fetched from the origin, two for one served from its cache. */
  fromCache: boolean;
}

describe.skipIf(MISSING.length > 0 && !REQUIRED)("Varnish with xkey in front of cdsnap serve, as docs/cdn.md sets it up", () => {
  let fx: Fixture;
  let origin: CliServer;
  let varnish: ChildProcess;
  let varnishExited: Promise<unknown>;
  let base: string;
  let hookEnv: NodeJS.ProcessEnv;
  let script: string;
  /** Flag files the test puts beside the hook to make a run hold at the gate, or fail. */
  let hold: string;
  /** Made by a run while it holds at the gate. */
  let holding: string;
  let fail: string;
  let gate: string;

  beforeAll(async () => {
    if (MISSING.length > 0) throw new Error(`${MISSING.join(", ")} missing; CI must install them (see .ci/run)`);
    await cliPath();
    fx = await makeFixture({ demo: true });
    const built = await runCli(buildArgs(fx, "--quiet"));
    expect(built.code, built.stderr).toBe(0);

    const page = await readFile(PAGE, "utf8");
    script = path.join(fx.dir, "purge-varnish.sh");
    await writeFile(script, docBlock(page, "purge-varnish.sh"));
    await chmod(script, 0o755);
    hold = path.join(fx.dir, "hold");
    holding = path.join(fx.dir, "holding");
    fail = path.join(fx.dir, "fail");
    gate = makeGate(path.join(fx.dir, "gate"));
    // The documented hook, behind a wrapper that lets the test hold a run at a gate or fail it.
    const event = path.join(fx.dir, "event.json");
    const wrapper = [
      `cat > ${shellQuote(event)}`,
      `if [ -e ${shellQuote(fail)} ]; then echo 'purge skipped: the test says fail' >&2; exit 1; fi`,
      `if [ -e ${shellQuote(hold)} ]; then touch ${shellQuote(holding)}; cat ${shellQuote(gate)} > /dev/null; rm ${shellQuote(holding)}; fi`,
      `exec ${shellQuote(script)} < ${shellQuote(event)}`,
    ].join("\n");

    const varnishPort = await freePort();
    base = `http://127.0.0.1:${varnishPort}`;
    hookEnv = { VARNISH_URL: base };
    const flags = documentedServeFlags(page);
    expect(flags).toEqual(["--client-address-header", "x-forwarded-for"]);
    origin = await startCliServer({ ...fx, stateDir: treeStoreOf(fx.out).stateDir }, [...flags, "--on-change", wrapper], hookEnv);

    const vcl = docBlock(page, "varnish.vcl");
    expect(vcl).toContain('.port = "8787";');
    const vclFile = path.join(fx.dir, "cdsnap.vcl");
    await writeFile(vclFile, vcl.replace('.port = "8787";', `.port = "${new URL(origin.url).port}";`));
    const workDir = path.join(fx.dir, "varnish");
    await mkdir(workDir);
    // -j none: as root, varnishd would otherwise switch to its own user, who cannot enter the temporary folder.
    const args = ["-F", "-j", "none", "-a", `127.0.0.1:${varnishPort}`, "-f", vclFile, "-n", workDir, "-s", "malloc,64m"];
    varnish = spawn("varnishd", args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    varnish.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    varnishExited = new Promise((resolve) => varnish.once("exit", resolve));
    const up = await pollUntil(
      () =>
        fetch(`${base}/`).then(
          () => true,
          () => false,
        ),
      20_000,
    );
    expect(up, `varnishd did not start: ${stderr}`).toBe(true);
  });

  afterAll(async () => {
    if (varnish && varnish.exitCode === null) {
      varnish.kill("SIGTERM");
      await varnishExited;
    }
    await stopCliServer(origin);
    await removeFixture(fx);
  });

  async function read(rest: string, key: string | null = DEMO_READ_KEY, orgId = "demo"): Promise<Read> {
    const res = await fetch(base + api(orgId, rest), { headers: key ? { "x-api-key": key } : {} });
    const ids = (res.headers.get("x-varnish") ?? "").trim().split(/\s+/);
    return { status: res.status, body: await res.text(), fromCache: ids.length === 2 };
  }

  /** Reads until the answer comes from the cache (the first read of a path fetches it). */
  async function cached(rest: string, key: string | null = DEMO_READ_KEY, orgId = "demo"): Promise<Read> {
    await read(rest, key, orgId);
    const again = await read(rest, key, orgId);
    expect(again.fromCache, `${rest} was not cached`).toBe(true);
    return again;
  }

  /** The origin's log lines about on-change runs. */
  const hookRuns = () =>
    origin
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === "on-change");

  /** Waits for the origin to log its `count`-th on-change run, and returns it. */
  async function hookRun(count: number): Promise<Record<string, unknown>> {
    expect(await pollUntil(async () => hookRuns().length >= count, 20_000), origin.stdout()).toBe(true);
    return hookRuns()[count - 1]!;
  }

  const description = (body: string) => (JSON.parse(body) as { businessDescription: string }).businessDescription;

  it("a repeated GET is served from the cache; another key, or none, is another answer (Vary)", async () => {
    const first = await read("categories");
    expect(first).toMatchObject({ status: 200, fromCache: false });
    expect(await read("categories")).toMatchObject({ status: 200, fromCache: true, body: first.body });
    expect(await read("categories", DEMO_WRITE_KEY)).toMatchObject({ status: 200, fromCache: false });
    expect(await read("categories", null)).toMatchObject({ status: 401, fromCache: false });
    expect(await read("categories", null)).toMatchObject({ status: 401, fromCache: false });
    expect(await read("categories", HARBOR_READ_KEY)).toMatchObject({ status: 403, fromCache: false });
  });

  it("a PATCH is answered while its hook hangs; the cache serves the old value until the hook has run, then the new one", async () => {
    const before = await cached("organization");
    const harbor = await cached("organization", HARBOR_READ_KEY, "harbor");
    await cached("categories");
    const runs = hookRuns().length;
    await writeFile(hold, "");
    const res = await patchJson(base, api("demo", "business-description"), DEMO_WRITE_KEY, { businessDescription: "Purged at once." });
    expect(res.status).toBe(200);
    expect(await pollUntil(() => pathExists(holding), 20_000), "the hook never reached the gate").toBe(true);
    await rm(hold);
    // The hook holds at the gate: no purge yet, so the cache still has the old answer.
    const stale = await read("organization");
    expect(stale).toMatchObject({ fromCache: true, body: before.body });
    expect(hookRuns()).toHaveLength(runs);
    await openGate(gate);
    expect(await hookRun(runs + 1)).toMatchObject({ event: "patch", status: "ok", tags: 1 });
    const fresh = await read("organization");
    expect(fresh.fromCache).toBe(false);
    expect(description(fresh.body)).toBe("Purged at once.");
    // Only what changed was purged.
    expect(await read("organization", HARBOR_READ_KEY, "harbor")).toMatchObject({ fromCache: true, body: harbor.body });
    expect(await read("categories")).toMatchObject({ fromCache: true });
  });

  it("a failing hook leaves the PATCH answered and logs the failure; the stale answer stays cached", async () => {
    const before = await cached("organization");
    const runs = hookRuns().length;
    await writeFile(fail, "");
    try {
      const res = await patchJson(base, api("demo", "business-description"), DEMO_WRITE_KEY, { businessDescription: "Not purged." });
      expect(res.status).toBe(200);
      expect(await hookRun(runs + 1)).toMatchObject({
        level: "error",
        status: "failed",
        exitCode: 1,
        stderr: "purge skipped: the test says fail\n",
      });
      expect(await read("organization")).toMatchObject({ fromCache: true, body: before.body });
    } finally {
      await rm(fail);
    }
  });

  it("after `cdsnap build --on-change` edits a post, the next GETs through the cache see the edit", async () => {
    const bySlug = "contents/by-slug/aeropress-recipes";
    for (const rest of [bySlug, "contents/post-0011", "contents", "contents/page/1", "contents/post-0011/references", "contents/post-0002"]) await cached(rest);
    const post = path.join(fx.content, "demo/guides/aeropress-recipes.md");
    await writeFile(post, (await readFile(post, "utf8")).replace(/^title: .*$/m, "title: AeroPress, purged"));
    const run = await runCli(buildArgs(fx, "--on-change", script), { env: hookEnv });
    expect(run.code, run.stderr).toBe(0);
    // The post's two files, the list, and the page of the list and of its category that hold it: each its own tag.
    expect(run.stderr).toMatch(/^on-change \(build: 5 paths, 4 tags\) ran in \d+ ms$/m);
    for (const rest of [bySlug, "contents/post-0011", "contents", "contents/page/1"]) {
      const fresh = await read(rest);
      expect(fresh.fromCache, rest).toBe(false);
      expect(fresh.body).toContain("AeroPress, purged");
    }
    // The post's references share its tag: purged too, fetched again, the same bytes.
    expect(await read("contents/post-0011/references")).toMatchObject({ fromCache: false });
    expect(await read("contents/post-0002")).toMatchObject({ fromCache: true });
  });

  it("one visitor sending bad keys is refused with 429; another visitor's cache misses keep answering 200", async () => {
    const url = (rest: string) => base + api("demo", rest);
    const statuses: number[] = [];
    // Bad keys are never cached (no-store), so each one reaches serve; past its allowance, 429.
    for (let i = 0; i < 40 && !statuses.includes(429); i++) statuses.push(await readFrom("127.0.0.2", url("contents"), `cdsnap_bad_${i}`));
    expect(statuses).toContain(429);
    // The limited visitor is refused even with a good key, on a path no one has asked yet.
    expect(await readFrom("127.0.0.2", url("contents/post-0005/references"), DEMO_READ_KEY)).toBe(429);
    // Every other visitor's misses reach serve and are answered.
    for (const rest of ["contents/post-0006/references", "contents/post-0007/references", "blocks"]) {
      expect(await readFrom("127.0.0.3", url(rest), DEMO_READ_KEY), rest).toBe(200);
    }
  });

  it("a revoked key is refused through the cache once the access hook has run", async () => {
    const created = await runCli(["keys", "create", "--db", fx.db, "--org", "demo", "--json"]);
    const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
    // serve takes up a new key the next time it looks at the database (a quarter second).
    expect(await pollUntil(async () => (await read("contents", key)).status === 200, 10_000)).toBe(true);
    await cached("contents", key);
    await cached("contents");
    const runs = hookRuns().length;
    const revoked = await runCli(["keys", "revoke", id, "--db", fx.db]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(await hookRun(runs + 1)).toMatchObject({ event: "access", status: "ok", tags: 1 });
    expect(await read("contents", key)).toMatchObject({ status: 401, fromCache: false });
    // The organization's other keys lost their cached answers with it, and get them again.
    expect(await read("contents")).toMatchObject({ status: 200, fromCache: false });
  });
  it("a preflight is answered by the cache after the first, per origin; an edit of allowed_origins purges it with the access hook", async () => {
    const listed = "https://shop.northwind.example";
    const preflight = async (origin: string): Promise<Read & { allowOrigin: string | null }> => {
      const res = await fetch(base + api("demo", "contents/post-0001"), {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "x-api-key" },
      });
      const ids = (res.headers.get("x-varnish") ?? "").trim().split(/\s+/);
      return { status: res.status, body: await res.text(), fromCache: ids.length === 2, allowOrigin: res.headers.get("access-control-allow-origin") };
    };
    const setOrigins = async (origins: string[] | null) => {
      const runs = hookRuns().length;
      withDb(fx.db, (db) => db.prepare("UPDATE organizations SET allowed_origins = ? WHERE id = 'demo'").run(origins && JSON.stringify(origins)));
      expect(await hookRun(runs + 1)).toMatchObject({ event: "access", status: "ok" });
    };

    expect(await preflight(listed)).toMatchObject({ status: 204, fromCache: false, allowOrigin: "*" });
    expect(await preflight(listed)).toMatchObject({ status: 204, fromCache: true, allowOrigin: "*" });
    // The method is part of the key: a GET of the same path is its own answer, and the preflight does not answer it.
    expect(await read("contents/post-0001")).toMatchObject({ status: 200, fromCache: false });

    await setOrigins([listed]);
    expect(await preflight(listed)).toMatchObject({ status: 204, fromCache: false, allowOrigin: listed });
    expect(await preflight(listed)).toMatchObject({ status: 204, fromCache: true, allowOrigin: listed });
    // Another origin is another answer (Vary: Origin): no CORS header, the browser's refusal.
    expect(await preflight("https://elsewhere.example")).toMatchObject({ status: 204, fromCache: false, allowOrigin: null });

    await setOrigins(null);
    expect(await preflight(listed)).toMatchObject({ status: 204, fromCache: false, allowOrigin: "*" });
  });
});
