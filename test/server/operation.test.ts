/**
 * Running `cdsnap serve`: the access log, reconciling organization files on
 * start (D14), and a clean stop on SIGTERM.
 */
import { existsSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { buildFixture, removeFixture } from "../fixtures/build-fixture.js";
import { storedBusiness, withDb } from "../fixtures/database.js";
import { organizationFile } from "../fixtures/tree.js";
import { type CliServer, makeSite, serveSite, type Site, startCliServer, stopCliServer } from "../fixtures/served-site.js";
import { api, call, patchJson, rawRequest } from "../fixtures/http.js";
import { pollUntil } from "../fixtures/wait.js";

let site: Site | undefined;
let cli: CliServer | undefined;
afterEach(async () => {
  await stopCliServer(cli);
  cli = undefined;
  await removeFixture(site);
  site = undefined;
});

const ORG = api("demo", "organization");
const DESCRIPTION = api("demo", "business-description");
const BODY_CANARY = "BODY-CANARY-7d3e9a1f";
const FAKE_KEY = "cds_FAKE-KEY-CANARY-2b8c4d6e";

/** Requests whose log lines must name method, path, status and key id, and nothing else of the request. */
async function exerciseLoggedRequests(url: string): Promise<void> {
  expect((await call(url, `${ORG}?pages=home`, { key: DEMO_READ_KEY })).status).toBe(200);
  expect((await patchJson(url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: `${BODY_CANARY} stored` })).status).toBe(200);
  expect((await patchJson(url, DESCRIPTION, DEMO_WRITE_KEY, { businessDescription: `${BODY_CANARY}\u0000` })).status).toBe(422);
  expect((await patchJson(url, DESCRIPTION, DEMO_WRITE_KEY, `{"businessDescription":"${BODY_CANARY}`)).status).toBe(400);
  expect((await call(url, ORG, { key: FAKE_KEY })).status).toBe(401);
  expect((await call(url, ORG, { key: DEMO_READ_KEY, method: "HEAD" })).status).toBe(200);
}

function expectAccessLines(lines: Record<string, unknown>[]): void {
  const access = lines.filter((line) => "status" in line);
  expect(access.map((l) => [l.method, l.path, l.status])).toEqual([
    ["GET", ORG, 200],
    ["PATCH", DESCRIPTION, 200],
    ["PATCH", DESCRIPTION, 422],
    ["PATCH", DESCRIPTION, 400],
    ["GET", ORG, 401],
    ["HEAD", ORG, 200],
  ]);
  for (const line of access) {
    expect(typeof line.ms).toBe("number");
    expect(line.ms as number).toBeGreaterThanOrEqual(0);
  }
  expect(access.map((l) => l.keyId)).toEqual(["demo-read", "demo-write", "demo-write", "demo-write", null, "demo-read"]);
  const text = JSON.stringify(lines);
  for (const secret of [DEMO_READ_KEY, DEMO_WRITE_KEY, FAKE_KEY, BODY_CANARY]) expect(text).not.toContain(secret);
}

describe("access log", () => {
  it("the library server logs method, path, status, ms and keyId, never a key or a body value", async () => {
    site = await makeSite();
    const served = await serveSite(site);
    try {
      await exerciseLoggedRequests(served.url);
    } finally {
      await served.close();
    }
    expectAccessLines(served.logs);
  });

  it("cdsnap serve writes one JSON object a line, never a key or a body value", async () => {
    site = await makeSite();
    cli = await startCliServer(site);
    await exerciseLoggedRequests(cli.url);
    await stopCliServer(cli);
    const lines = cli.stdout().split("\n").filter((l) => l !== "");
    expect(lines[0]).toBe(`cdsnap serving ${cli.url}`);
    const parsed = lines.slice(1).map((line) => JSON.parse(line) as Record<string, unknown>);
    expectAccessLines(parsed);
    expect(cli.stderr()).not.toContain(DEMO_WRITE_KEY);
    expect(cli.stderr()).not.toContain(BODY_CANARY);
  });
});

describe("cdsnap serve does not build (D14)", () => {
  it("before the first build it refuses to start, says how to build, and no tree appears", async () => {
    site = await makeSite({ built: false });
    await expect(serveSite(site)).rejects.toThrow(
      expect.objectContaining({ code: "usage", message: expect.stringMatching(/^there is no published tree at .*; make one with: cdsnap build /) }),
    );
    expect(existsSync(site.out)).toBe(false);
    expect(existsSync(site.stateDir)).toBe(false);
    // Once built, it serves.
    await buildFixture(site);
    const served = await serveSite(site);
    try {
      expect((await call(served.url, ORG, { key: DEMO_READ_KEY })).status).toBe(200);
    } finally {
      await served.close();
    }
  });
});

describe("startup reconciliation (D14)", () => {
  it("a description committed without its file (a crash between commit and rename) is served after a restart", async () => {
    site = await makeSite();
    const before = (await organizationFile(site, "demo")).toString("utf8");
    withDb(site.db, (db) =>
      db.prepare("UPDATE organizations SET business_description = ? WHERE id = ?").run("Committed, never renamed.", "demo"),
    );
    expect(before).not.toContain("Committed, never renamed.");

    cli = await startCliServer(site);
    const res = await call(cli.url, ORG, { key: DEMO_READ_KEY });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { businessDescription: string }).businessDescription).toBe("Committed, never renamed.");
    const file = JSON.parse((await organizationFile(site, "demo")).toString("utf8")) as { businessDescription: string };
    expect(file.businessDescription).toBe("Committed, never renamed.");
  });

  it("offers committed without their file are served after a restart", async () => {
    site = await makeSite();
    withDb(site.db, (db) => {
      db.prepare("DELETE FROM business_offers WHERE org_id = 'demo'").run();
      db.prepare("INSERT INTO business_offers (org_id, position, name, description, link) VALUES ('demo', 0, 'Only', 'The one offer left.', NULL)").run();
    });
    cli = await startCliServer(site);
    const res = await call(cli.url, ORG, { key: DEMO_READ_KEY });
    expect(((await res.json()) as { businessOffers: unknown }).businessOffers).toEqual([
      { name: "Only", description: "The one offer left." },
    ]);
  });
});

describe("SIGTERM", () => {
  it("cdsnap serve finishes the request in flight, stops listening and exits 0", async () => {
    site = await makeSite();
    cli = await startCliServer(site);
    const { hostname, port } = new URL(cli.url);
    // A keep-alive connection left idle must not hold the process open.
    expect((await call(cli.url, ORG, { key: DEMO_READ_KEY })).status).toBe(200);

    // A PATCH whose headers the server has taken (100-continue) but whose body has not arrived yet.
    const body = JSON.stringify({ businessDescription: "Written while stopping." });
    const req = httpRequest({
      host: hostname,
      port,
      method: "PATCH",
      path: DESCRIPTION,
      agent: false,
      headers: {
        "x-api-key": DEMO_WRITE_KEY,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        expect: "100-continue",
      },
    });
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req.on("response", (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
    });
    await new Promise<void>((resolve) => req.on("continue", resolve));

    cli.child.kill("SIGTERM");
    // The listener closes first: new connections are refused while the PATCH is still open.
    const refused = await pollUntil(
      () =>
        rawRequest(cli!.url, { path: ORG, headers: { "x-api-key": DEMO_READ_KEY } }).then(
          () => false,
          (error: NodeJS.ErrnoException) => error.code === "ECONNREFUSED",
        ),
      30_000,
    );
    expect(refused).toBe(true);
    expect(cli.child.exitCode).toBeNull();

    req.end(body);
    const res = await answered;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ businessDescription: "Written while stopping." });
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(storedBusiness(site.db, "demo").businessDescription).toBe("Written while stopping.");
  });
});
