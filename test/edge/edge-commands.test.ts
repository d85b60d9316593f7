/**
 * `cdsnap edge init`, `edge dev` and `edge serve` as a person runs them: the
 * bundled CLI (dist/cli.js beside dist/edge.js, as `npm test` writes them) in
 * a child process on a real built site. The project `edge init` writes is run
 * in the Workers runtime (miniflare) from its own wrangler.jsonc, as wrangler
 * would deploy it.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { createKey, revokeKey } from "../../src/db/keys.js";
import { KV_ID_PLACEHOLDER } from "../../src/edge/edge-init.js";
import { edgeDocumentFileOf } from "../../src/edge/publish-document.js";
import { EDGE_WORKER_SOURCE, WORKER_COMPATIBILITY_DATE } from "../../src/edge/worker-source.js";
import { buildFixture, makeFixture, makeTempDir, removeDir, removeFixture, type Fixture } from "../fixtures/build-fixture.js";
import { runCliBounded, startCli, type Run } from "../fixtures/cli.js";
import { withDb } from "../fixtures/database.js";
import { edgeBundle, send } from "../fixtures/edge.js";
import { listFiles } from "../fixtures/tree.js";

const DEMO = "/api/organizations/demo";

let fx: Fixture;
let project: string;

beforeAll(async () => {
  fx = await makeFixture({ demo: true });
  await buildFixture(fx);
  project = await makeTempDir("cdsnap-edge-project-");
}, 60_000);

afterAll(async () => {
  await removeFixture(fx);
  await removeDir(project);
});

/** A long-running command's first line matching `pattern` on stdout. */
function lineOf(child: ChildProcess, done: Promise<Run>, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = "";
    const look = (chunk: string) => {
      out += chunk;
      const match = pattern.exec(out);
      if (match) {
        child.stdout!.off("data", look);
        resolve(match);
      }
    };
    child.stdout!.on("data", look);
    void done.then((run) => reject(new Error(`exited with ${run.code} before printing ${pattern}: ${run.stderr}`)));
  });
}

/** Stops a command this test started, by its pid, and waits for it. */
async function stop(child: ChildProcess, done: Promise<Run>): Promise<Run> {
  child.kill("SIGTERM");
  return done;
}

/** JSONC as `edge init` writes it: whole-line comments only. */
function parseJsonc(text: string): Record<string, unknown> {
  return JSON.parse(text.split("\n").filter((line) => !line.trim().startsWith("//")).join("\n")) as Record<string, unknown>;
}

describe("cdsnap edge init", () => {
  it("writes a Workers project whose worker, run as its wrangler.jsonc says, answers with the key check", async () => {
    const run = await runCliBounded(["edge", "init", "--out", fx.out, "--to", project, "--origin", "https://origin.example.org/ignored"]);
    expect(run.code).toBe(0);
    for (const file of ["wrangler.jsonc", "worker.js", "cdsnap-edge.js", "README.md"]) expect(existsSync(path.join(project, file))).toBe(true);

    const config = parseJsonc(await readFile(path.join(project, "wrangler.jsonc"), "utf8")) as {
      main: string;
      compatibility_date: string;
      assets: { directory: string; binding: string; run_worker_first: boolean };
      kv_namespaces: { binding: string; id: string }[];
      vars: Record<string, string>;
    };
    expect(path.resolve(project, config.assets.directory)).toBe(fx.out);
    expect(config.assets.run_worker_first).toBe(true);
    expect(config.kv_namespaces[0]!.id).toBe(KV_ID_PLACEHOLDER);
    expect(config.vars.CDSNAP_ORIGIN).toBe("https://origin.example.org");
    expect(await readFile(path.join(project, "README.md"), "utf8")).toContain("npx wrangler deploy");

    const mf = new Miniflare({
      scriptPath: path.join(project, config.main),
      modules: true,
      modulesRoot: project,
      // As wrangler takes them: a .js module is an ES module (miniflare alone would read it as CommonJS).
      modulesRules: [{ type: "ESModule", include: ["**/*.js"] }],
      compatibilityDate: config.compatibility_date,
      assets: {
        directory: path.resolve(project, config.assets.directory),
        binding: config.assets.binding,
        routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: config.assets.run_worker_first },
      },
      kvNamespaces: config.kv_namespaces.map((ns) => ns.binding),
      bindings: config.vars,
      port: 0,
    });
    try {
      const url = (await mf.ready).origin;
      // Before the document is put into KV the worker refuses to guess.
      expect((await send(url, `${DEMO}/organization`, { headers: { "x-api-key": DEMO_READ_KEY } })).status).toBe(500);
      const kv = (await mf.getKVNamespace(config.kv_namespaces[0]!.binding)) as unknown as { put(key: string, value: string): Promise<void> };
      await kv.put("edge.json", await readFile(edgeDocumentFileOf(fx.out), "utf8"));
      const file = await readFile(path.join(fx.out, "api/organizations/demo/organization.json"));
      const read = await send(url, `${DEMO}/organization`, { headers: { "x-api-key": DEMO_READ_KEY } });
      expect(read.status).toBe(200);
      expect(read.body.equals(file)).toBe(true);
      expect((await send(url, `${DEMO}/organization`)).status).toBe(401);
      // The tree is reached only through the worker: no file answers without a key.
      expect((await send(url, "/api/organizations/demo/organization.json")).status).toBe(401);
    } finally {
      await mf.dispose();
    }
  });
});

describe("cdsnap edge dev and edge serve", () => {
  it("edge dev prints its URL once the runtime answers, and passes a PATCH to the serve it started", async () => {
    const { child, done } = startCli(["edge", "dev", "--db", fx.db, "--out", fx.out, "--port", "0"]);
    try {
      const [, url, originUrl] = await lineOf(child, done, /^cdsnap edge dev serving (http:\/\/\S+) \(workerd; PATCHes go to (http:\/\/\S+)\)$/m);
      expect((await send(url!, `${DEMO}/organization`, { headers: { "x-api-key": DEMO_READ_KEY } })).status).toBe(200);
      const patch = await send(url!, `${DEMO}/business-description`, {
        method: "PATCH",
        headers: { "x-api-key": DEMO_WRITE_KEY, "content-type": "application/json" },
        body: JSON.stringify({ businessDescription: "Through edge dev" }),
      });
      expect(patch.status).toBe(200);
      const read = await send(url!, `${DEMO}/organization`, { headers: { "x-api-key": DEMO_READ_KEY } });
      expect(JSON.parse(read.body.toString("utf8")).businessDescription).toBe("Through edge dev");

      // edge serve: the same handler under Node, passing writes to the same origin.
      const served = startCli(["edge", "serve", "--out", fx.out, "--port", "0", "--origin", originUrl!]);
      try {
        const [, nodeUrl] = await lineOf(served.child, served.done, /^cdsnap edge serving (http:\/\/\S+)$/m);
        const again = await send(nodeUrl!, `${DEMO}/organization`, { headers: { "x-api-key": DEMO_READ_KEY } });
        expect(again.status).toBe(200);
        expect(again.body.equals(read.body)).toBe(true);
      } finally {
        expect((await stop(served.child, served.done)).code).toBe(0);
      }
    } finally {
      expect((await stop(child, done)).code).toBe(0);
    }
  });

  it("edge serve refuses to start without an edge document, and says how to write one", async () => {
    const other = await makeFixture({ demo: true });
    try {
      await buildFixture(other);
      await removeDir(edgeDocumentFileOf(other.out));
      const run = await runCliBounded(["edge", "serve", "--out", other.out, "--port", "0"]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`cdsnap edge keys --db <database> --out ${other.out}`);
    } finally {
      await removeFixture(other);
    }
  });
});

describe("the worker with its tree in R2", () => {
  it("reads each file under its path in the tree, with the object's upload time as Last-Modified", async () => {
    const mf = new Miniflare({
      modules: [
        { type: "ESModule", path: "worker.js", contents: EDGE_WORKER_SOURCE },
        { type: "ESModule", path: "cdsnap-edge.js", contents: await readFile(await edgeBundle(), "utf8") },
      ],
      compatibilityDate: WORKER_COMPATIBILITY_DATE,
      r2Buckets: ["TREE"],
      kvNamespaces: ["CDSNAP_EDGE"],
      bindings: { CDSNAP_TREE_PREFIX: "site/" },
      port: 0,
    });
    try {
      const url = (await mf.ready).origin;
      type Put = { put(key: string, value: string | Uint8Array): Promise<unknown> };
      const bucket = (await mf.getR2Bucket("TREE")) as unknown as Put;
      for (const file of await listFiles(fx.out)) await bucket.put(`site/${file}`, new Uint8Array(await readFile(path.join(fx.out, file))));
      const kv = (await mf.getKVNamespace("CDSNAP_EDGE")) as unknown as Put;
      await kv.put("edge.json", await readFile(edgeDocumentFileOf(fx.out), "utf8"));

      const read = await send(url, `${DEMO}/blocks?pages=home`, { headers: { "x-api-key": DEMO_READ_KEY } });
      expect(read.status).toBe(200);
      expect(JSON.parse(read.body.toString("utf8")).items.map((b: { id: string }) => b.id)).toEqual(["blk-hero", "blk-announcement"]);
      expect(Date.now() - Date.parse(read.headers["last-modified"]!)).toBeLessThan(10 * 60_000);
      expect((await send(url, `${DEMO}/contents/post-9999`, { headers: { "x-api-key": DEMO_READ_KEY } })).status).toBe(404);
      expect((await send(url, `${DEMO}/blocks`)).status).toBe(401);
    } finally {
      await mf.dispose();
    }
  });
});

describe("cdsnap edge keys", () => {
  it("writes the document again after a change made without --out", async () => {
    const created = withDb(fx.db, (db) => createKey(db, { orgId: "harbor", scopes: ["read"] }));
    const docFile = edgeDocumentFileOf(fx.out);
    const revokedIn = async () => {
      const doc = JSON.parse(await readFile(docFile, "utf8")) as { keys: { keyId: string; revoked: boolean }[] };
      return doc.keys.find((k) => k.keyId === created.record.id)?.revoked;
    };
    const first = await runCliBounded(["edge", "keys", "--db", fx.db, "--out", fx.out]);
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe(docFile);
    expect(await revokedIn()).toBe(false);

    withDb(fx.db, (db) => revokeKey(db, created.record.id));
    expect(await revokedIn()).toBe(false);
    expect((await runCliBounded(["edge", "keys", "--db", fx.db, "--out", fx.out])).code).toBe(0);
    expect(await revokedIn()).toBe(true);
  });
});
