/**
 * Area 5, crashes of the server. `kill -9` of `cdsnap serve` after a commit
 * whose file was never renamed, and in the middle of 16 clients writing: on
 * restart the server reconciles, every organization file equals the database,
 * the database passes its integrity check, and no acknowledged write is lost.
 * (The build's crashes are in crash-builds.test.ts.)
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/open.js";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { removeFixture } from "../fixtures/build-fixture.js";
import { storedBusiness, withDb } from "../fixtures/database.js";
import { organizationFile } from "../fixtures/tree.js";
import { runCliBounded } from "../fixtures/cli.js";
import { type CliServer, makeSite, type Site, startCliServer } from "../fixtures/served-site.js";
import { api, httpCall } from "../fixtures/http.js";
import { plantCanarySecrets, SecretScanner, secretsOf } from "../fixtures/secrets.js";
import { budget, printFigures, scaled, seededRandom } from "../fixtures/soak.js";
import { sleep } from "../fixtures/wait.js";

const rand = seededRandom();

const figures = {
  commits: { rounds: 0, reconciled: 0 },
  writers: { rounds: 0, patches: 0, inFlight: 0, reconciled: 0, lost: 0 },
};
const scanner = new SecretScanner(secretsOf([]));

afterAll(() => {
  printFigures(
    `crashes, server: ${figures.commits.rounds} x kill -9 between commit and rename, ${figures.commits.reconciled} reconciled on restart; ` +
      `${figures.writers.rounds} x kill -9 under 16 writers (${figures.writers.patches} PATCHes acknowledged, ${figures.writers.inFlight} in flight at the kill), ` +
      `${figures.writers.reconciled} restarts with every file equal to the database, ${figures.writers.lost} acknowledged writes lost`,
  );
  printFigures(`crashes (server), secrets: ${scanner.summary()}`);
});

// -------------------------------------------------------------- kill -9 serve

describe("kill -9 the server", () => {
  let site: Site;
  let cli: CliServer | undefined;

  beforeAll(async () => {
    site = await makeSite();
    scanner.add(plantCanarySecrets(site.db));
  });
  afterAll(async () => {
    expect(scanner.found).toEqual([]);
    if (cli?.child.exitCode === null && cli.child.signalCode === null) cli.child.kill("SIGKILL");
    await removeFixture(site);
  });

  async function kill(server: CliServer): Promise<void> {
    server.child.kill("SIGKILL");
    await server.exited;
    scanner.logs(server.stdout().split("\n"), "cdsnap serve stdout");
    scanner.logs(server.stderr().split("\n"), "cdsnap serve stderr");
  }

  async function servedMatchesDatabase(url: string): Promise<void> {
    for (const [org, key] of [["demo", DEMO_READ_KEY], ["harbor", HARBOR_READ_KEY]] as const) {
      const res = await httpCall(url, { path: api(org, "organization"), key });
      scanner.response(res.status, res.headers, res.text, "GET after restart");
      expect(res.status).toBe(200);
      const served = JSON.parse(res.text) as Record<string, unknown>;
      const stored = storedBusiness(site.db, org);
      expect({ businessDescription: served.businessDescription, businessOffers: served.businessOffers }, org).toEqual(stored);
      const file = JSON.parse((await organizationFile(site, org)).toString("utf8")) as Record<string, unknown>;
      expect(file).toEqual(served);
    }
    const db = openDatabase(site.db, { readonly: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
  }

  it("a commit whose file was never renamed (the server killed in between) is served after the restart", { timeout: budget(60_000, 3) }, async () => {
    for (let round = 0; round < scaled(4, 5); round++) {
      cli = await startCliServer(site, ["--write-rate", "1000000"]);
      const org = round % 2 === 0 ? "demo" : "harbor";
      // A PATCH's commit, made as the proxy makes it, with no file written after it: then the kill.
      const value = `Committed in round ${round}, never renamed ${randomBytes(4).toString("hex")}.`;
      withDb(site.db, (db) =>
        db.transaction(() => {
          db.prepare("UPDATE organizations SET business_description = ? WHERE id = ?").run(value, org);
          db.prepare("DELETE FROM business_offers WHERE org_id = ?").run(org);
          db.prepare("INSERT INTO business_offers (org_id, position, name, description, link) VALUES (?, 0, ?, ?, ?)").run(
            org,
            `Offer ${round}`,
            "Committed, never renamed.",
            round % 3 === 0 ? null : `https://example.com/${round}`,
          );
        }).immediate(),
      );
      expect((await organizationFile(site, org)).toString("utf8")).not.toContain(value);
      await kill(cli);
      figures.commits.rounds++;

      cli = await startCliServer(site, ["--write-rate", "1000000"]);
      await servedMatchesDatabase(cli.url);
      expect(storedBusiness(site.db, org).businessDescription).toBe(value);
      figures.commits.reconciled++;
      await kill(cli);
    }
  });

  it("kill -9 while 16 clients PATCH in a loop: after the restart every file equals the database, no acknowledged write lost", { timeout: budget(90_000, 4) }, async () => {
    // Created before any server starts: a key made while one runs is refused until its key cache reloads.
    const harborWrite = await harborWriteKey();
    for (let round = 0; round < scaled(5, 4); round++) {
      cli = await startCliServer(site, ["--write-rate", "1000000"]);
      const url = cli.url;
      interface Write { cell: string; value: string; sentAt: number; ackedAt: number | null }
      const writes: Write[] = [];
      let alive = true;
      const clients = Array.from({ length: 16 }, async (_, c) => {
        for (let n = 0; alive; n++) {
          const org = c % 2 === 0 ? "demo" : "harbor";
          const offers = (c + n) % 3 === 0;
          const tag = `r${round}-c${c}-n${n}`;
          const body = offers ? { businessOffers: [{ name: `Offer ${tag}`, description: "Killed mid-write, maybe." }] } : { businessDescription: `Description ${tag}` };
          const write: Write = { cell: `${org} ${offers ? "offers" : "description"}`, value: JSON.stringify(offers ? body.businessOffers : body.businessDescription), sentAt: performance.now(), ackedAt: null };
          writes.push(write);
          try {
            const res = await httpCall(url, {
              method: "PATCH",
              path: api(org, offers ? "business-offers" : "business-description"),
              key: org === "demo" ? DEMO_WRITE_KEY : harborWrite,
              headers: { "content-type": "application/json" },
              body: JSON.stringify(body),
            });
            scanner.response(res.status, res.headers, res.text, "PATCH before the kill");
            expect(res.status, res.text).toBe(200);
            write.ackedAt = performance.now();
            figures.writers.patches++;
          } catch (error) {
            if (alive) throw error;
            return;
          }
        }
      });
      await sleep(300 + rand() * 1_200);
      alive = false;
      await kill(cli);
      await Promise.all(clients);
      figures.writers.rounds++;
      figures.writers.inFlight += writes.filter((w) => w.ackedAt === null).length;

      cli = await startCliServer(site, ["--write-rate", "1000000"]);
      await servedMatchesDatabase(cli.url);
      figures.writers.reconciled++;
      // Each stored value was written by a client, and no write acknowledged after it was sent later.
      for (const org of ["demo", "harbor"]) {
        const stored = storedBusiness(site.db, org);
        for (const [cell, value] of [[`${org} description`, JSON.stringify(stored.businessDescription)], [`${org} offers`, JSON.stringify(stored.businessOffers)]] as const) {
          const mine = writes.filter((w) => w.cell === cell);
          const winner = mine.find((w) => w.value === value);
          if (!winner) {
            // Nothing of this cell was acknowledged in this round: the value is an older round's.
            expect(mine.filter((w) => w.ackedAt !== null), cell).toEqual([]);
            continue;
          }
          const lost = mine.filter((w) => w.ackedAt !== null && winner.ackedAt !== null && w.sentAt > winner.ackedAt);
          figures.writers.lost += lost.length;
          expect(lost, cell).toEqual([]);
        }
      }
      await kill(cli);
    }
    await scanner.scanFiles(site.dir);
    expect(scanner.found).toEqual([]);
  });

  let harborKey: Promise<string> | undefined;
  function harborWriteKey(): Promise<string> {
    harborKey ??= runCliBounded(["keys", "create", "--db", site.db, "--org", "harbor", "--scopes", "read,write", "--json"]).then((run) => {
      const key = (JSON.parse(run.stdout) as { key: string }).key;
      scanner.add([key]);
      return key;
    });
    return harborKey;
  }
});

