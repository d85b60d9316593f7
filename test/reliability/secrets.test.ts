/**
 * Area 7, secrets. Canary secrets in every organization, then a bit of every
 * other area against one `cdsnap serve` process and the `cdsnap` CLI: hostile
 * bodies, hostile paths, every caller, concurrent writes, a killed and a failed
 * build, a killed server, an internal error. Afterwards no canary, no stored
 * secret, no raw key and no key hash appears in any file but the database, any
 * response body or header, any log line or any command's output. (Every other
 * area scans what it saw the same way and prints its own secrets line.)
 */
import fc from "fast-check";
import { cp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { DEMO_CONTENT } from "../fixtures/repo.js";
import { removeFixture } from "../fixtures/build-fixture.js";
import { withDb } from "../fixtures/database.js";
import { writeBulkPosts } from "../fixtures/posts.js";
import { runCliBounded, startCli } from "../fixtures/cli.js";
import { type CliServer, makeSite, type Site, startCliServer, stopCliServer } from "../fixtures/served-site.js";
import { api, httpCall, onTheWire } from "../fixtures/http.js";
import { plantCanarySecrets, SecretScanner, secretsOf } from "../fixtures/secrets.js";
import { budget, printFigures, scaled } from "../fixtures/soak.js";
import { sleep } from "../fixtures/wait.js";
import { hostileBodyArb } from "../fixtures/body-oracle.js";

let site: Site;
let content: string;
let scanner: SecretScanner;
let canaries: string[] = [];
const servers: CliServer[] = [];
const commands: string[] = [];

beforeAll(async () => {
  site = await makeSite({ built: false });
  canaries = plantCanarySecrets(site.db);
  scanner = new SecretScanner(secretsOf(canaries));
  content = path.join(site.dir, "content");
  await cp(DEMO_CONTENT, content, { recursive: true });
  await run(["build", "--db", site.db, "--content", content, "--out", site.out, "--json"]);
});

afterAll(async () => {
  for (const server of servers) await stopCliServer(server);
  await removeFixture(site);
  printFigures(
    `secrets: ${canaries.length} canaries in ${canaries.length / 3} organizations; ${scanner?.summary()}, ` +
      `${commands.length} command outputs`,
  );
});

async function run(args: string[], expectCode: number | null = 0): Promise<void> {
  const result = await runCliBounded(args, 120_000);
  commands.push(args[0]!);
  scanner.text(result.stdout, `cdsnap ${args[0]} stdout`);
  scanner.text(result.stderr, `cdsnap ${args[0]} stderr`);
  if (expectCode !== null) expect(result.code, result.stderr).toBe(expectCode);
}

async function serve(): Promise<CliServer> {
  const server = await startCliServer(site, ["--write-rate", "1000000"]);
  servers.push(server);
  return server;
}

function scanServer(server: CliServer): void {
  scanner.logs(server.stdout().split("\n"), "cdsnap serve stdout");
  scanner.logs(server.stderr().split("\n"), "cdsnap serve stderr");
}

describe("secrets", () => {
  it("after hostile bodies, paths, callers, concurrent writes, crashes and errors, no secret is anywhere but the database", { timeout: budget(120_000, 3) }, async () => {
    const created = await runCliBounded(["keys", "create", "--db", site.db, "--org", "harbor", "--scopes", "read,write", "--json"]);
    const harborWrite = (JSON.parse(created.stdout) as { key: string }).key;
    scanner.add([harborWrite]);
    // The one place a raw key may appear is the creator's terminal: that output is not scanned.
    await run(["keys", "list", "--db", site.db, "--json"]);
    await run(["keys", "list", "--db", site.db]);

    let server = await serve();
    const call = async (options: Parameters<typeof httpCall>[1]) => {
      const res = await httpCall(server.url, options);
      scanner.response(res.status, res.headers, res.text, `${options.method ?? "GET"} ${options.path.slice(0, 60)}`);
      return res;
    };

    // Hostile bodies.
    for (const c of fc.sample(hostileBodyArb, scaled(300, 5))) {
      if (c.body.length > 60_000) continue;
      const res = await call({
        method: "PATCH",
        path: api("demo", c.endpoint === "offers" ? "business-offers" : "business-description"),
        key: DEMO_WRITE_KEY,
        headers: c.contentType ? { "content-type": c.contentType } : {},
        body: c.body,
      });
      expect(res.status).toBeLessThan(500);
    }
    // Hostile paths, including the database and its journal.
    for (const target of ["/db.sqlite", "/db.sqlite-wal", "/../db.sqlite", "/api/organizations/demo/%2e%2e/%2e%2e/%2e%2e/db.sqlite-wal", "/.site.cdsnap/lock"]) {
      scanner.wire(await onTheWire(server.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nx-api-key: ${DEMO_READ_KEY}\r\n\r\n`), target);
    }
    // Every caller on every organization's every list, and the origins echo.
    for (const key of [undefined, "", "nope", DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY, harborWrite]) {
      for (const org of ["demo", "harbor"]) {
        for (const rest of ["organization", "blocks", "contents", "categories", "business-description"]) {
          await call({ path: api(org, rest), key, headers: { origin: "https://evil.example" } });
        }
      }
    }
    // Concurrent writes on both organizations.
    await Promise.all(
      Array.from({ length: 10 }, (_, w) =>
        (async () => {
          for (let n = 0; n < 10; n++) {
            const org = w % 2 ? "demo" : "harbor";
            await call({
              method: "PATCH",
              path: api(org, "business-description"),
              key: org === "demo" ? DEMO_WRITE_KEY : harborWrite,
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ businessDescription: `Writer ${w} write ${n}` }),
            });
          }
        })(),
      ),
    );

    // A killed build, a build that fails on bad sources, a full one, and a killed server.
    await writeBulkPosts(content, "demo", 100, "secrets");
    const killed = startCli(["build", "--db", site.db, "--content", content, "--out", site.out]);
    await sleep(300);
    killed.child.kill("SIGKILL");
    const killedRun = await killed.done;
    scanner.text(killedRun.stdout + killedRun.stderr, "killed build output");
    await writeFile(path.join(content, "demo", "broken.md"), "---\nid: broken\ntitle: [unclosed\n---\n");
    await run(["build", "--db", site.db, "--content", content, "--out", site.out], 1);
    await run(["build", "--db", site.db, "--content", content, "--out", site.out, "--json"], 1);
    await writeFile(path.join(content, "demo", "broken.md"), "");
    await run(["build", "--db", site.db, "--content", content, "--out", site.out], 1);
    await run(["check", "--db", site.db, "--content", content], null);
    await rm(path.join(content, "demo", "broken.md"));
    await run(["build", "--db", site.db, "--content", content, "--out", site.out, "--json"]);
    await run(["audit", "--db", site.db, "--out", site.out], null);

    server.child.kill("SIGKILL");
    await server.exited;
    scanServer(server);
    server = await serve();

    // An internal error: its stack goes to the log, never a secret.
    withDb(site.db, (db) => db.exec("ALTER TABLE business_offers RENAME TO business_offers_moved"));
    const broken = await call({ method: "PATCH", path: api("demo", "business-offers"), key: DEMO_WRITE_KEY, headers: { "content-type": "application/json" }, body: '{"businessOffers":[]}' });
    expect(broken.status).toBe(500);
    withDb(site.db, (db) => db.exec("ALTER TABLE business_offers_moved RENAME TO business_offers"));
    await stopCliServer(server);
    scanServer(server);

    await scanner.scanFiles(site.dir);
    expect(scanner.found).toEqual([]);
    expect(scanner.files).toBeGreaterThan(100);
  });
});
