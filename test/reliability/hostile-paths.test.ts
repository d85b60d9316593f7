/**
 * Area 2, hostile paths and headers. Canary files sit beside the tree, in the
 * state folder, beside and inside the live generation, and behind symbolic
 * links planted inside the tree (a file link and folder links). Generated
 * request targets built from traversal pieces, encodings, dotfiles and the
 * names of the database and the build state never bring back a byte that is not
 * the one API file the path names. Malformed `x-api-key` headers get 401 (or
 * the parser's 400/431), never a 5xx.
 */
import fc from "fast-check";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveGenerationSync, treeStoreOf, type Generation } from "../../src/emit/tree-store.js";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { buildFixture, removeFixture } from "../fixtures/build-fixture.js";
import { listFiles } from "../fixtures/tree.js";
import { makeSite, type Served, serveSite, type Site } from "../fixtures/served-site.js";
import { api, JSON_TYPE, onTheWire, type WireAnswer } from "../fixtures/http.js";
import { plantCanarySecrets, SecretScanner, secretsOf } from "../fixtures/secrets.js";
import { budget, printFigures, scaled } from "../fixtures/soak.js";

const CANARY = "CANARY-FILE-7f3a9c1e-outside-the-api-tree";
const RUNS = scaled(1_500);

let site: Site;
let served: Served;
let live: Generation;
let scanner: SecretScanner;
/** API path → the bytes of its file, for every file of the live tree. */
const legit = new Map<string, Buffer>();

const figures = { generated: 0, fixed: 0, served200: 0, outside: 0, fiveXx: 0, byStatus: new Map<number, number>(), headerCases: 0, headerStatuses: new Map<number, number>() };

beforeAll(async () => {
  site = await makeSite({ built: false });
  scanner = new SecretScanner([...secretsOf(plantCanarySecrets(site.db)), CANARY]);
  await buildFixture(site);
  // Thousands of bad keys from one address on purpose: the failure limit is not what this area probes.
  served = await serveSite(site, { writeRate: 1_000_000_000, authFailureRate: 1_000_000_000 });
  live = liveGenerationSync(treeStoreOf(site.out))!;

  for (const rel of await listFiles(site.out)) {
    legit.set(`/${rel.slice(0, -".json".length)}`, await readFile(path.join(live.tree, rel)));
  }

  const body = JSON.stringify({ canary: CANARY, items: [], id: "demo" });
  const outside = path.join(site.dir, "outside");
  await mkdir(outside);
  for (const name of ["references.json", "organization.json", "blocks.json", "categories.json", "evil.json"]) {
    await writeFile(path.join(outside, name), body);
  }
  // Beside the tree: next to the database, in the state folder, beside the live generation's tree.
  for (const dir of [site.dir, site.stateDir, path.join(site.stateDir, "gens"), live.dir]) {
    for (const name of ["canary.json", "canary", ".env", ".env.json", "config.json"]) await writeFile(path.join(dir, name), body);
  }
  // Inside the tree but not an API path: dotfiles and stray names.
  const demo = path.join(live.tree, "api", "organizations", "demo");
  for (const dir of [live.tree, path.join(live.tree, "api"), demo]) {
    for (const name of [".env", ".env.json", ".htaccess", "canary.json"]) await writeFile(path.join(dir, name), body);
  }
  await mkdir(path.join(demo, ".git"));
  await writeFile(path.join(demo, ".git", "config.json"), body);
  // Links inside the tree: a file link, and folder links leading out of it.
  await symlink(path.join(outside, "evil.json"), path.join(demo, "contents", "post-link.json"));
  await symlink(outside, path.join(demo, "contents", "post-evil"));
  await symlink(outside, path.join(demo, "blocks", "blk-evil"));
  await symlink(outside, path.join(live.tree, "api", "organizations", "evilorg"));
});

afterAll(async () => {
  await served?.close();
  await removeFixture(site);
  const statuses = [...figures.byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${n} x ${s}`).join(", ");
  printFigures(
    `hostile paths: ${figures.generated + figures.fixed} tried (${figures.generated} generated, ${figures.fixed} listed; ${statuses}), ` +
      `${figures.outside} answers from outside the API tree, ${figures.fiveXx} x 5xx`,
  );
  const headerStatuses = [...figures.headerStatuses].sort(([a], [b]) => a - b).map(([s, n]) => `${n} x ${s}`).join(", ");
  printFigures(`hostile headers: ${figures.headerCases} x-api-key cases (${headerStatuses}), 0 x 5xx, every refusal the D6 body`);
  printFigures(`hostile paths, secrets: ${scanner?.summary()}`);
});

function normalized(absoluteOrOrigin: string): string {
  // RFC 9112 §3.2.2: an absolute-form target names the same file as its path.
  const target = absoluteOrOrigin.replace(/^https?:\/\/[^/?#]*/i, "");
  const q = target.indexOf("?");
  let p = q === -1 ? target : target.slice(0, q);
  if (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  return p;
}

async function request(method: string, target: string, headerLines: string, body = ""): Promise<WireAnswer> {
  const head = `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${headerLines}\r\n${body}`;
  return onTheWire(served.url, Buffer.from(head, "latin1"), undefined, 10_000);
}

function expectD6(answer: WireAnswer, where: string): { error: { code: string } } {
  expect(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i.test(answer.text), where).toBe(true);
  const body = JSON.parse(Buffer.from(answer.body, "latin1").toString("utf8")) as { error: { code: string; message: string } };
  expect(Object.keys(body), where).toEqual(["error"]);
  expect(body.error.message.length, where).toBeGreaterThan(0);
  return body;
}

const CODE_OF: Record<number, string[]> = {
  400: ["bad_request"],
  401: ["unauthorized"],
  403: ["forbidden"],
  404: ["not_found"],
  414: ["bad_request"],
  431: ["headers_too_large"],
};

/** One GET (or HEAD) of a hostile target with the demo read key: the API file it names, or a 4xx. */
async function probePath(target: string, method = "GET"): Promise<void> {
  const answer = await request(method, target, `x-api-key: ${DEMO_READ_KEY}\r\n`);
  const status = answer.status ?? 0;
  figures.byStatus.set(status, (figures.byStatus.get(status) ?? 0) + 1);
  if (status >= 500) figures.fiveXx++;
  scanner.wire(answer, `${method} ${target.slice(0, 80)}`);
  const where = `${method} ${JSON.stringify(target.slice(0, 300))} → ${answer.text.slice(0, 200)}`;
  const bodyBytes = Buffer.from(answer.body, "latin1");
  const name = normalized(target);
  const expected = legit.get(name);
  if (answer.text.includes(CANARY) || answer.text.includes("SQLite format") || (status === 200 && expected === undefined)) figures.outside++;
  if (expected && !target.includes("#") && !name.startsWith("/api/organizations/demo/")) {
    // Another organization's real file, with the demo key: D5.
    expect(status, where).toBe(403);
    return;
  }
  if (expected && !target.includes("#")) {
    expect(status, where).toBe(200);
    if (method === "HEAD") expect(answer.body, where).toBe("");
    else if (name.endsWith("/blocks") && /[?&]pages=[^&]*[^&\s,]/.test(target)) {
      // D8: a filtered list holds only blocks of the full list, in its order.
      const full = (JSON.parse(expected.toString("utf8")) as { items: unknown[] }).items.map((b) => JSON.stringify(b));
      const items = (JSON.parse(bodyBytes.toString("utf8")) as { items: unknown[] }).items.map((b) => JSON.stringify(b));
      expect(items.every((b) => full.includes(b)), where).toBe(true);
    } else expect(bodyBytes.equals(expected), where).toBe(true);
    figures.served200++;
    return;
  }
  expect([400, 403, 404, 414, 431], where).toContain(status);
  if (method === "HEAD") {
    expect(answer.body, where).toBe("");
    return;
  }
  const body = expectD6(answer, where);
  expect(CODE_OF[status], where).toContain(body.error.code);
}

const SEGMENTS = [
  "..", ".", "%2e%2e", "%2E%2E", "%2e.", ".%2e", "%252e%252e", "%25252e", "%2f", "%2F", "%252f", "%5c", "%5C", "\\", "..\\..",
  "%00", "%2500", "..%00", "%c0%ae%c0%ae", "%e0%80%ae%e0%80%ae", "..;", "....//", "..%2f..%2f..", "%2e%2e%2f%2e%2e%2f", "",
  "api", "organizations", "demo", "DEMO", "Demo", "d%65mo", "harbor", "evilorg", "blocks", "by-slug", "contents", "organization", "ORGANIZATION",
  "categories", "references", "blk-hero", "blk-evil", "home-hero", "post-0001", "post-evil", "post-link", "canary.json", "canary", ".env",
  ".env.json", ".htaccess", ".git", "config", "db.sqlite", "db.sqlite-wal", "db.sqlite-shm", ".site.cdsnap", "gens", "000001", "tree", "state.sqlite",
  "state", "pages", "demo.json", "lock", "organization.json", "blocks.json", "outside", "%6f%72%67anization", "%EF%BD%84%EF%BD%85%EF%BD%8D%EF%BD%8F",
  "de%CC%81mo", "d%C3%A9mo", "caf%C3%A9", "%E2%80%AEomed", "a".repeat(129), "b".repeat(4_000), "x%20y", "%0d%0aSet-Cookie:%20x=1",
];
const PREFIXES = ["/", "/api/organizations/demo/", "/api/organizations/demo/contents/", "/api/organizations/demo/blocks/by-slug/", "//", "/./", "/api/organizations/"];
const SUFFIXES = ["", "", "/", "?pages=home", "?x=../../db.sqlite", "#frag", ".json", "%00", "%2f", "/.", "/..", "?"];

const targetArb = fc
  .tuple(fc.constantFrom(...PREFIXES), fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 7 }), fc.constantFrom(...SUFFIXES))
  .map(([prefix, segments, suffix]) => prefix + segments.join("/") + suffix);

const LISTED = [
  "/db.sqlite", "/db.sqlite-wal", "/db.sqlite-shm", "/../db.sqlite", "/../../db.sqlite-wal", "/api/organizations/demo/../../../../db.sqlite-wal",
  "/api/organizations/demo/%2e%2e/%2e%2e/%2e%2e/%2e%2e/db.sqlite-wal", "/api/organizations/demo/..%2f..%2f..%2f..%2fdb.sqlite",
  "/.site.cdsnap/lock", "/.site.cdsnap/gens/000001/manifest.json", "/api/organizations/demo/pages", "/manifest.json", "/.env", "/.env.json",
  "/api/.env", "/api/organizations/demo/.env", "/api/organizations/demo/.git/config", "/canary.json", "/outside/evil.json",
  "/api/organizations/demo/contents/post-evil/references", "/api/organizations/demo/contents/post-evil/references/",
  "/api/organizations/demo/contents/post-link", "/api/organizations/demo/blocks/blk-evil", "/api/organizations/evilorg/organization",
  "/api/organizations/evilorg/categories", "/API/organizations/demo/organization", "/api/Organizations/demo/organization",
  "/api/organizations/DEMO/organization", "/api/organizations/demo/Organization", "/api/organizations/d%65mo/organization",
  "/api/organizations/%64emo/organization", "/api/organizations/demo/organization%2ejson", "/api/organizations/demo/organization.json",
  "/api/organizations/demo/contents/by-slug/caf%C3%A9", "/api/organizations/demo/contents/by-slug/cafe%CC%81",
  `/api/organizations/demo/contents/${"p".repeat(129)}`, `/api/organizations/${"o".repeat(129)}/organization`,
  `/api/organizations/demo/contents/by-slug/${"s".repeat(201)}`, `/${"a".repeat(15_000)}`, `/${"a".repeat(20_000)}`,
  "/api/organizations/demo/organization\\", "/api/organizations/demo\\organization", "/api/organizations/demo/organization%5c",
  "/api/organizations/demo/organization%00.json", "/api/organizations/demo/organization\u0000", "/api/organizations/démo/organization",
  "/api/organizations/demo/organization\t", "/api/organizations/demo/organization?pages=../../../db.sqlite",
  "http://localhost/api/organizations/demo/../../../canary.json", "http://evil.example/api/organizations/demo/organization",
  "*", "/api/organizations/demo/organization/", "/api/organizations/demo/organization//", "/api/organizations/demo//organization",
];

describe("hostile paths", () => {
  it(`${RUNS} generated request targets and ${LISTED.length} listed ones answer the API file they name or a 4xx, never anything else`, { timeout: budget(90_000) }, async () => {
    for (const target of LISTED) {
      for (const method of ["GET", "HEAD"]) {
        await probePath(target, method);
        figures.fixed++;
      }
    }
    // A fifth of the targets are real API paths with a twist, so the generator reaches real files too.
    const realArb = fc
      .tuple(fc.constantFrom(...legit.keys()), fc.constantFrom(...SUFFIXES))
      .map(([p, suffix]) => p + suffix);
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 4, arbitrary: targetArb }, { weight: 1, arbitrary: realArb }), fc.constantFrom("GET", "GET", "HEAD"), async (target, method) => {
        figures.generated++;
        await probePath(target, method);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(figures.outside).toBe(0);
    expect(figures.fiveXx).toBe(0);
    // The generator reaches real files too, so the 404s are not a broken tree.
    expect(figures.served200).toBeGreaterThan(0);
  });

  it("a folder link planted inside the tree is not followed: 404, and the real files still answer", async () => {
    for (const target of ["/api/organizations/demo/contents/post-evil/references", "/api/organizations/demo/contents/post-link"]) {
      const answer = await request("GET", target, `x-api-key: ${DEMO_READ_KEY}\r\n`);
      expect(answer.status, answer.text).toBe(404);
      expect(answer.text).not.toContain(CANARY);
    }
    const ok = await request("GET", api("demo", "contents/post-0001/references"), `x-api-key: ${DEMO_READ_KEY}\r\n`);
    expect(ok.status).toBe(200);
  });
});

describe("hostile x-api-key headers", () => {
  const KEY_CASES: [string, string, number[]][] = [
    ["missing", "", [401]],
    ["empty", "x-api-key:\r\n", [401]],
    ["blank", "x-api-key:    \t \r\n", [401]],
    ["repeated, both valid", `x-api-key: ${DEMO_READ_KEY}\r\nx-api-key: ${DEMO_READ_KEY}\r\n`, [401]],
    ["repeated, valid and not", `x-api-key: ${DEMO_READ_KEY}\r\nx-api-key: nope\r\n`, [401]],
    ["repeated, not and valid", `x-api-key: nope\r\nx-api-key: ${DEMO_READ_KEY}\r\n`, [401]],
    ["10 KB", `x-api-key: ${"k".repeat(10_240)}\r\n`, [401]],
    ["10 KB starting with the key", `x-api-key: ${DEMO_READ_KEY}${"k".repeat(10_200)}\r\n`, [401]],
    ["15 KB", `x-api-key: ${"k".repeat(15_000)}\r\n`, [401]],
    ["over the 16 KiB header limit", `x-api-key: ${"k".repeat(20_000)}\r\n`, [431]],
    ["newline-terminated (bare LF)", `x-api-key: ${DEMO_READ_KEY}\n\r\n`, [400]],
    ["CR inside", `x-api-key: ${DEMO_READ_KEY}\rX\r\n`, [400]],
    ["NUL inside", `x-api-key: ${DEMO_READ_KEY}\u0000\r\n`, [400]],
    ["folded onto a second line", `x-api-key: ${DEMO_READ_KEY}\r\n extra\r\n`, [400]],
    ["a literal \\n after the key", `x-api-key: ${DEMO_READ_KEY}\\n\r\n`, [401]],
    ["%0A after the key", `x-api-key: ${DEMO_READ_KEY}%0A\r\n`, [401]],
    ["latin-1 bytes", `x-api-key: ${DEMO_READ_KEY}\u00e9\r\n`, [401]],
    ["the key upper-cased", `x-api-key: ${DEMO_READ_KEY.toUpperCase()}\r\n`, [401]],
    ["the key's stored hash", `x-api-key: ${"0".repeat(64)}\r\n`, [401]],
    ["the key cut short", `x-api-key: ${DEMO_READ_KEY.slice(0, -1)}\r\n`, [401]],
    ["as a Bearer token", `authorization: Bearer ${DEMO_READ_KEY}\r\n`, [401]],
    ["as a cookie", `cookie: x-api-key=${DEMO_READ_KEY}\r\n`, [401]],
    ["under another name", `x-api_key: ${DEMO_READ_KEY}\r\n`, [401]],
    ["with a space before the colon", `x-api-key : ${DEMO_READ_KEY}\r\n`, [400]],
    // Spaces and tabs around a header value are not part of it (RFC 9110): the same key.
    ["padded with spaces and tabs", `x-api-key: \t ${DEMO_READ_KEY} \t\r\n`, [200]],
    ["name in capitals", `X-API-KEY: ${DEMO_READ_KEY}\r\n`, [200]],
  ];

  it("every malformed key answers 401 with the D6 body, or the HTTP parser's 400/431; never a 5xx", { timeout: budget(30_000, 3) }, async () => {
    const targets = [
      ["GET", api("demo", "organization")],
      ["GET", api("demo", "blocks")],
      ["HEAD", api("demo", "contents")],
      ["GET", "/api/organizations/demo/nope"],
      ["PATCH", api("demo", "business-description")],
      ["PATCH", api("demo", "business-offers")],
    ] as const;
    for (let round = 0; round < scaled(1, 5); round++) {
      for (const [name, lines, statuses] of KEY_CASES) {
        for (const [method, target] of targets) {
          const patch = method === "PATCH" ? "content-type: application/json\r\ncontent-length: 2\r\n" : "";
          const answer = await request(method, target, lines + patch, method === "PATCH" ? "{}" : "");
          const status = answer.status ?? 0;
          figures.headerCases++;
          figures.headerStatuses.set(status, (figures.headerStatuses.get(status) ?? 0) + 1);
          scanner.wire(answer, `${method} key ${name}`);
          const where = `${name}: ${method} ${target} → ${answer.text.slice(0, 200)}`;
          let wanted = statuses;
          // A padded valid key on a write path with a read key: authenticated, then the D5 answer for the scope.
          if (statuses.includes(200) && method === "PATCH") wanted = [403];
          if (statuses.includes(200) && target.endsWith("/nope")) wanted = [404];
          expect(wanted, where).toContain(status);
          if (status !== 200 && method !== "HEAD") expectD6(answer, where);
        }
      }
    }
    // The same writes with the write key, so the 401s above are not a broken endpoint.
    const ok = await request(
      "PATCH",
      api("demo", "business-description"),
      `x-api-key: ${DEMO_WRITE_KEY}\r\ncontent-type: application/json\r\ncontent-length: 28\r\n`,
      '{"businessDescription":"ok"}',
    );
    expect(ok.status, ok.text).toBe(200);
    expect(/\r\ncontent-type: ([^\r]*)/i.exec(ok.text)?.[1]).toBe(JSON_TYPE);
  });
});

describe("secrets", () => {
  // Files are not scanned here: this area plants canary files on purpose. Every other area scans its files.
  it("no canary file, secret or key reached a response or a log line", async () => {
    scanner.logs(served.logs, "server log");
    expect(scanner.found).toEqual([]);
    expect(served.logs.filter((l) => l.level === "error")).toEqual([]);
  });
});
