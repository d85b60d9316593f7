/**
 * Area 4, concurrency: 50 writers x 20 PATCHes over both endpoints and two
 * organizations against `cdsnap serve`, while readers loop on GETs, a full
 * `cdsnap build` runs, and another process takes SQLite's write lock now and
 * then. No update is lost (each final value is one no later acknowledged write
 * could have overwritten), no SQLITE_BUSY reaches a client, every GET parses,
 * and at quiescence the tree equals a fresh build of the database.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { DEMO_CONTENT, REPO_ROOT } from "../fixtures/repo.js";
import { buildFixture, removeFixture } from "../fixtures/build-fixture.js";
import { storedBusiness } from "../fixtures/database.js";
import { treeDigest } from "../fixtures/tree.js";
import { runCliBounded } from "../fixtures/cli.js";
import { type CliServer, makeSite, type Site, startCliServer, stopCliServer } from "../fixtures/served-site.js";
import { api, httpCall } from "../fixtures/http.js";
import { plantCanarySecrets, SecretScanner, secretsOf } from "../fixtures/secrets.js";
import { budget, percentile, printFigures, scaled } from "../fixtures/soak.js";
import { sleep } from "../fixtures/wait.js";

const WRITERS = 50;
const PER_WRITER = scaled(20, 5);

let site: Site;
let cli: CliServer | undefined;
let scanner: SecretScanner;
let harborWriteKey = "";

const figures = {
  patches: 0,
  patch5xx: 0,
  patchNot200: 0,
  lost: 0,
  gets: 0,
  unparsable: 0,
  torn: 0,
  builds: 0,
  locks: 0,
  lockMs: 0,
  files: 0,
  patchMs: [] as number[],
  busyInLogs: 0,
};

beforeAll(async () => {
  site = await makeSite({ built: false });
  const canaries = plantCanarySecrets(site.db);
  await buildFixture(site);
  const created = await runCliBounded(["keys", "create", "--db", site.db, "--org", "harbor", "--scopes", "read,write", "--json"]);
  harborWriteKey = (JSON.parse(created.stdout) as { key: string }).key;
  scanner = new SecretScanner(secretsOf(canaries, [harborWriteKey]));
});

afterAll(async () => {
  await stopCliServer(cli);
  await removeFixture(site);
  printFigures(
    `concurrency: ${figures.patches} PATCHes by ${WRITERS} writers on 2 organizations x 2 endpoints ` +
      `(${figures.lost} lost updates, ${figures.patch5xx} x 5xx, ${figures.busyInLogs} SQLITE_BUSY; p50 ${percentile(figures.patchMs, 50).toFixed(1)} ms, ` +
      `p99 ${percentile(figures.patchMs, 99).toFixed(1)} ms), ${figures.gets} GETs (${figures.unparsable} unparsable, ${figures.torn} torn), ` +
      `${figures.builds} full build and ${figures.locks} foreign write locks (${figures.lockMs} ms) during the writes; ` +
      `at quiescence ${figures.files} files equal a fresh build`,
  );
  printFigures(`concurrency, secrets: ${scanner?.summary()}`);
});

type Cell = "demo description" | "demo offers" | "harbor description" | "harbor offers";
interface Write {
  cell: Cell;
  value: string;
  sentAt: number;
  ackedAt: number;
  status: number;
}

/** Holds SQLite's write lock from another process for `ms`, the way an admin tool might. */
function holdWriteLock(dbFile: string, ms: number): Promise<void> {
  const script =
    "const D=require('better-sqlite3');const d=new D(process.argv[1]);d.pragma('busy_timeout = 10000');" +
    "d.exec('BEGIN IMMEDIATE');const t=Date.now();while(Date.now()-t<Number(process.argv[2])){}d.exec('COMMIT');d.close();";
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", script, dbFile, String(ms)], { cwd: REPO_ROOT, stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`lock holder exited ${code}`))));
  });
}

describe("concurrency", () => {
  it(`${WRITERS} writers x ${PER_WRITER} PATCHes, readers, a full build and foreign write locks: nothing lost, nothing torn`, { timeout: budget(150_000, 4) }, async () => {
    cli = await startCliServer(site, ["--write-rate", "1000000"]);
    const url = cli.url;
    const writes: Write[] = [];
    let writing = true;

    const readers = Array.from({ length: 4 }, async (_, r) => {
      const targets = [
        [api("demo", "organization"), DEMO_READ_KEY],
        [api("harbor", "organization"), HARBOR_READ_KEY],
        [api("demo", "blocks"), DEMO_READ_KEY],
        [api("demo", "contents"), DEMO_READ_KEY],
        [api("harbor", "categories"), HARBOR_READ_KEY],
      ] as const;
      for (let i = r; writing; i++) {
        const [target, key] = targets[i % targets.length]!;
        const res = await httpCall(url, { path: target, key });
        figures.gets++;
        scanner.response(res.status, res.headers, res.text, `GET ${target}`);
        expect(res.status, `GET ${target}`).toBe(200);
        try {
          JSON.parse(res.text);
        } catch {
          figures.unparsable++;
        }
        if (res.headers.etag !== `"${createHash("sha256").update(res.text).digest("hex")}"`) figures.torn++;
      }
    });

    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let n = 0; n < PER_WRITER; n++) {
        const org = (w + n) % 2 === 0 ? "demo" : "harbor";
        const endpoint = (w * 7 + n) % 3 === 0 ? "offers" : "description";
        const tag = `w${w}-n${n}-${randomBytes(3).toString("hex")}`;
        const body =
          endpoint === "offers"
            ? { businessOffers: [{ name: `Offer ${tag}`, description: `Written by writer ${w}.`, link: `https://example.com/${tag}` }] }
            : { businessDescription: `Description ${tag}` };
        const sentAt = performance.now();
        const res = await httpCall(url, {
          method: "PATCH",
          path: api(org, endpoint === "offers" ? "business-offers" : "business-description"),
          key: org === "demo" ? DEMO_WRITE_KEY : harborWriteKey,
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const ackedAt = performance.now();
        figures.patches++;
        figures.patchMs.push(res.ms);
        scanner.response(res.status, res.headers, res.text, "PATCH");
        if (res.status >= 500) figures.patch5xx++;
        if (res.status !== 200) figures.patchNot200++;
        expect(res.status, res.text).toBe(200);
        expect(JSON.parse(res.text)).toEqual(body);
        writes.push({ cell: `${org} ${endpoint}` as Cell, value: JSON.stringify(endpoint === "offers" ? body.businessOffers : body.businessDescription), sentAt, ackedAt, status: res.status });
      }
    });

    // A full build of every organization while the writes go on, and foreign write locks.
    const building = (async () => {
      await sleep(200);
      const run = await runCliBounded(["build", "--db", site.db, "--content", DEMO_CONTENT, "--out", site.out], 120_000);
      scanner.text(run.stdout + run.stderr, "cdsnap build output");
      expect(run.code, run.stderr).toBe(0);
      figures.builds++;
    })();
    const locking = (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(150);
        await holdWriteLock(site.db, 400);
        figures.locks++;
        figures.lockMs += 400;
      }
    })();

    await Promise.all([...writers, building, locking]);
    writing = false;
    await Promise.all(readers);

    // No lost update: the stored value of each cell was acknowledged, and no write sent after its
    // acknowledgement (which would have to commit later and overwrite it) was acknowledged as well.
    for (const org of ["demo", "harbor"] as const) {
      const stored = storedBusiness(site.db, org);
      for (const [cell, value] of [
        [`${org} description`, JSON.stringify(stored.businessDescription)],
        [`${org} offers`, JSON.stringify(stored.businessOffers)],
      ] as const) {
        const mine = writes.filter((w) => w.cell === cell);
        expect(mine.length).toBeGreaterThan(0);
        const winner = mine.find((w) => w.value === value);
        expect(winner, `${cell}: the stored value was never acknowledged`).toBeDefined();
        const later = mine.filter((w) => w.sentAt > winner!.ackedAt);
        figures.lost += later.length;
        expect(later.map((w) => w.value), `${cell}: acknowledged after the stored value, then lost`).toEqual([]);
      }
      // The served file says what the database says.
      const served = JSON.parse((await httpCall(url, { path: api(org, "organization"), key: org === "demo" ? DEMO_READ_KEY : HARBOR_READ_KEY })).text) as Record<string, unknown>;
      expect({ businessDescription: served.businessDescription, businessOffers: served.businessOffers }).toEqual(stored);
    }

    // At quiescence the tree is exactly what a fresh build of the database writes.
    const fresh = path.join(site.dir, "fresh");
    const run = await runCliBounded(["build", "--db", site.db, "--content", DEMO_CONTENT, "--out", fresh], 120_000);
    expect(run.code, run.stderr).toBe(0);
    const [live, clean] = await Promise.all([treeDigest(site.out), treeDigest(fresh)]);
    figures.files = live.files;
    expect(live.unparsable).toEqual([]);
    expect(live.hash).toBe(clean.hash);

    await stopCliServer(cli);
    const log = cli.stdout() + cli.stderr();
    figures.busyInLogs = (log.match(/SQLITE_BUSY/g) ?? []).length;
    expect(figures.busyInLogs).toBe(0);
    expect(log).not.toContain('"level":"error"');
    expect(cli.stderr()).toBe("");
    scanner.logs(cli.stdout().split("\n"), "cdsnap serve stdout");
    await scanner.scanFiles(site.dir);
    expect(figures.unparsable + figures.torn + figures.patch5xx).toBe(0);
    expect(scanner.found).toEqual([]);
  });
});
