/**
 * Area 6, slow clients. Headers sent a line at a time (slowloris), bodies
 * trickled a byte at a time and connections that say nothing are cut off by
 * the header and request timeouts with the D6 408 body, while normal reads and
 * writes keep being served; a slow writer never holds SQLite's write lock,
 * because the body is read before any lock is taken.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TIMEOUTS, startServer } from "../../src/server/create-server.js";
import { openDatabase } from "../../src/db/open.js";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { buildFixture, removeFixture } from "../fixtures/build-fixture.js";
import { dumpBusinessTables } from "../fixtures/database.js";
import { makeSite, type Served, serveSite, type Site } from "../fixtures/served-site.js";
import { api, httpCall, onTheWire, type WireAnswer } from "../fixtures/http.js";
import { plantCanarySecrets, SecretScanner, secretsOf } from "../fixtures/secrets.js";
import { budget, percentile, printFigures, scaled } from "../fixtures/soak.js";
import { sleep } from "../fixtures/wait.js";

const HEADERS_MS = 1_000;
const REQUEST_MS = 2_000;
const CHECK_MS = 100;

let site: Site;
let served: Served;
let scanner: SecretScanner;

const figures = {
  slowloris: [] as number[],
  silent: [] as number[],
  trickled: [] as number[],
  gets: [] as number[],
  patches: [] as number[],
  lockChecks: 0,
  lockHeld: 0,
};

beforeAll(async () => {
  site = await makeSite({ built: false });
  scanner = new SecretScanner(secretsOf(plantCanarySecrets(site.db)));
  await buildFixture(site);
  served = await serveSite(site, {
    writeRate: 1_000_000_000,
    timeouts: { headersMs: HEADERS_MS, requestMs: REQUEST_MS, keepAliveMs: 1_000, checkIntervalMs: CHECK_MS },
  });
});

afterAll(async () => {
  await served?.close();
  await removeFixture(site);
  const range = (ms: number[]) => (ms.length ? `${(Math.min(...ms) / 1000).toFixed(1)}–${(Math.max(...ms) / 1000).toFixed(1)} s` : "n/a");
  printFigures(
    `slow clients: ${figures.slowloris.length} slowloris connections cut off after ${range(figures.slowloris)} (header limit ${HEADERS_MS / 1000} s), ` +
      `${figures.silent.length} silent ones after ${range(figures.silent)}, ${figures.trickled.length} trickled bodies after ${range(figures.trickled)} ` +
      `(request limit ${REQUEST_MS / 1000} s), all 408; meanwhile ${figures.gets.length} GETs (p99 ${percentile(figures.gets, 99).toFixed(0)} ms) ` +
      `and ${figures.patches.length} PATCHes (p99 ${percentile(figures.patches, 99).toFixed(0)} ms) served, ` +
      `the write lock free at ${figures.lockChecks - figures.lockHeld} of ${figures.lockChecks} checks during the trickles`,
  );
  printFigures(`slow clients, secrets: ${scanner?.summary()}`);
});

/** GETs and PATCHes one after another until `stop()`; every one must succeed. */
function normalTraffic(url: string) {
  let running = true;
  const loop = (async () => {
    for (let n = 0; running; n++) {
      if (n % 4 === 3) {
        const res = await httpCall(url, {
          method: "PATCH",
          path: api("demo", "business-description"),
          key: DEMO_WRITE_KEY,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ businessDescription: `Normal write ${n}` }),
        });
        expect(res.status, res.text).toBe(200);
        figures.patches.push(res.ms);
      } else {
        const res = await httpCall(url, { path: api("demo", n % 2 ? "organization" : "blocks"), key: DEMO_READ_KEY });
        expect(res.status).toBe(200);
        JSON.parse(res.text);
        figures.gets.push(res.ms);
      }
      await sleep(10);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

function expect408(answer: WireAnswer, what: string): void {
  scanner.wire(answer, what);
  expect(answer.status, `${what}: ${answer.error ?? ""} ${answer.text.slice(0, 200)}`).toBe(408);
  const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("request_timeout");
}

describe("slow clients", () => {
  it("the defaults stay production-sized: 10 s for headers, 30 s for a request, checked every second", async () => {
    const running = await startServer({ db: site.db, out: site.out, port: 0, log: () => {} });
    try {
      expect(running.server.headersTimeout).toBe(10_000);
      expect(running.server.requestTimeout).toBe(30_000);
      expect(DEFAULT_TIMEOUTS.checkIntervalMs).toBe(1_000);
    } finally {
      await running.close(100);
    }
  });

  it("slowloris headers and silent connections are cut off by the header timeout while normal requests go on", { timeout: budget(30_000, 3) }, async () => {
    const traffic = normalTraffic(served.url);
    const count = scaled(50, 4);
    const slowloris = Array.from({ length: count }, (_, i) =>
      onTheWire(
        served.url,
        `GET ${api("demo", "organization")} HTTP/1.1\r\nHost: x\r\n`,
        async (socket) => {
          // One more header line every 200 ms, never the blank line that ends them.
          for (let n = 0; !socket.destroyed; n++) {
            await sleep(200);
            if (!socket.destroyed) socket.write(`x-slow-${i}-${n}: ${"z".repeat(20)}\r\n`);
          }
        },
        20_000,
      ),
    );
    const silent = Array.from({ length: scaled(20, 4) }, () => onTheWire(served.url, "", undefined, 20_000));
    const answers = await Promise.all(slowloris);
    const quiet = await Promise.all(silent);
    await traffic.stop();
    for (const answer of answers) {
      expect408(answer, "slowloris");
      figures.slowloris.push(answer.ms);
      expect(answer.ms).toBeLessThan(HEADERS_MS + CHECK_MS + 2_000);
    }
    for (const answer of quiet) {
      // A connection that never sent a byte is closed without an answer, or with the 408.
      if (answer.status !== null) expect408(answer, "silent");
      figures.silent.push(answer.ms);
      expect(answer.ms).toBeLessThan(HEADERS_MS + CHECK_MS + 2_000);
    }
  });

  it("trickled bodies are cut off by the request timeout, hold no lock, and change nothing, while normal writes go on", { timeout: budget(30_000, 3) }, async () => {
    const before = dumpBusinessTables(site.db);
    const traffic = normalTraffic(served.url);
    const probe = openDatabase(site.db);
    probe.pragma("busy_timeout = 0");
    let trickling = true;
    const lockChecks = (async () => {
      while (trickling) {
        await sleep(100);
        figures.lockChecks++;
        try {
          // Another writer gets the lock at once: no slow client sits on it.
          probe.exec("BEGIN IMMEDIATE");
          probe.exec("ROLLBACK");
        } catch {
          figures.lockHeld++;
        }
      }
    })();
    const body = JSON.stringify({ businessDescription: "A body that never finishes arriving." });
    const trickles = Array.from({ length: scaled(20, 4) }, (_, i) =>
      onTheWire(
        served.url,
        `PATCH ${api("demo", i % 2 ? "business-offers" : "business-description")} HTTP/1.1\r\nHost: x\r\n` +
          `x-api-key: ${DEMO_WRITE_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
        async (socket) => {
          for (let n = 0; n < body.length && !socket.destroyed; n++) {
            socket.write(body[n]!);
            await sleep(150);
          }
        },
        20_000,
      ),
    );
    const answers = await Promise.all(trickles);
    trickling = false;
    await lockChecks;
    await traffic.stop();
    probe.close();
    for (const answer of answers) {
      expect408(answer, "trickled body");
      figures.trickled.push(answer.ms);
      expect(answer.ms).toBeLessThan(REQUEST_MS + CHECK_MS + 2_000);
    }
    expect(figures.lockHeld).toBe(0);
    // The normal writes changed the description; the trickled ones changed nothing else.
    const after = JSON.parse(dumpBusinessTables(site.db)) as { business_offers: unknown };
    expect(after.business_offers).toEqual((JSON.parse(before) as { business_offers: unknown }).business_offers);
    expect(JSON.stringify(after)).not.toContain("never finishes arriving");
  });

  it("the cut-off requests are logged as 408s, not as server errors, and no secret reached a log line or a file", async () => {
    await scanner.scanFiles(site.dir);
    expect(served.logs.filter((l) => l.level === "error")).toEqual([]);
    const timedOut = served.logs.filter((l) => l.status === 408);
    expect(timedOut.length).toBe(figures.trickled.length);
    scanner.logs(served.logs, "server log");
    expect(scanner.found).toEqual([]);
  });
});
