/**
 * Area 1, hostile bodies: thousands of generated PATCH bodies across both
 * endpoints. Every answer is the status D6/D7 names with the D6 body, never a
 * 5xx; a refused body changes no row and no file; no body pollutes a prototype;
 * a body far past 64 KiB is cut off with memory bounded.
 */
import fc from "fast-check";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "../../src/db/open.js";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { buildFixture, removeFixture } from "../fixtures/build-fixture.js";
import { statSnapshot } from "../fixtures/tree.js";
import { makeSite, type Served, serveSite, type Site, startCliServer, stopCliServer } from "../fixtures/served-site.js";
import { api, httpCall, JSON_TYPE, onTheWire, type WireAnswer } from "../fixtures/http.js";
import { plantCanarySecrets, SecretScanner, secretsOf } from "../fixtures/secrets.js";
import { budget, printFigures, scaled } from "../fixtures/soak.js";
import { type BodyCase, hostileBodyArb, MAX_BODY } from "../fixtures/body-oracle.js";

const RUNS = scaled(3_000);
const CODES: Record<number, string> = { 400: "malformed_json", 413: "payload_too_large", 415: "unsupported_media_type", 422: "validation_failed" };
const PATHS = { description: api("demo", "business-description"), offers: api("demo", "business-offers") };
const ORG = api("demo", "organization");

let site: Site;
let served: Served;
let db: Db;
let scanner: SecretScanner;
const protoNames = Object.getOwnPropertyNames(Object.prototype).sort().join();

const figures = {
  tried: 0,
  fiveXx: 0,
  refused: 0,
  accepted: 0,
  changesOnRefusal: 0,
  byStatus: new Map<number, number>(),
  byKind: new Map<string, number>(),
  bigStreams: 0,
  framing: 0,
  bigBytesSent: 0,
  peakRss: [] as number[],
};

beforeAll(async () => {
  site = await makeSite({ built: false });
  const canaries = plantCanarySecrets(site.db);
  scanner = new SecretScanner(secretsOf(canaries));
  await buildFixture(site);
  served = await serveSite(site, { writeRate: 1_000_000_000 });
  db = openDatabase(site.db, { readonly: true });
});

afterAll(async () => {
  db?.close();
  await served?.close();
  await removeFixture(site);
  const statuses = [...figures.byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${n} x ${s}`).join(", ");
  printFigures(
    `hostile bodies: ${figures.tried} tried (${statuses}), ${figures.fiveXx} x 5xx, ` +
      `${figures.changesOnRefusal} changes on refusal, prototypes untouched`,
  );
  printFigures(
    `hostile bodies by family: ${[...figures.byKind].map(([k, n]) => `${k} ${n}`).join(", ")}`,
  );
  printFigures(
    `hostile bodies, oversized: ${figures.bigStreams} bodies of up to 16 MiB (${Math.round(figures.bigBytesSent / 2 ** 20)} MiB sent before the cut-offs), ` +
      `all 413, plus ${figures.framing} framing tricks all 4xx; server peak RSS by round ${figures.peakRss.map((p) => p.toFixed(0)).join(" → ")} MB`,
  );
  printFigures(`hostile bodies, secrets: ${scanner?.summary()}`);
});

interface State {
  version: number;
  tree: string;
}

async function stateNow(): Promise<State> {
  return { version: db.pragma("data_version", { simple: true }) as number, tree: statSnapshot(site.stateDir) };
}

async function send(c: BodyCase): Promise<{ status: number; contentType: string | null; text: string; headers: Record<string, string> }> {
  if (c.body.length > MAX_BODY) {
    // Refused before it is read: on the wire, so the answer is seen even when the upload is cut off.
    const head =
      `PATCH ${PATHS[c.endpoint]} HTTP/1.1\r\nHost: x\r\nx-api-key: ${DEMO_WRITE_KEY}\r\n` +
      (c.contentType === null ? "" : `content-type: ${c.contentType}\r\n`) +
      `content-length: ${c.body.length}\r\nconnection: close\r\n\r\n`;
    const wire = await onTheWire(served.url, head, async (socket) => {
      socket.write(c.body);
    });
    const type = /\r\ncontent-type: ([^\r]*)/i.exec(wire.text)?.[1] ?? null;
    return { status: wire.status ?? 0, contentType: type, text: Buffer.from(wire.body, "latin1").toString("utf8"), headers: {} };
  }
  const headers: Record<string, string> = {};
  if (c.contentType !== null) headers["content-type"] = c.contentType;
  const res = await httpCall(served.url, { method: "PATCH", path: PATHS[c.endpoint], key: DEMO_WRITE_KEY, headers, body: c.body });
  return { status: res.status, contentType: res.headers["content-type"] ?? null, text: res.text, headers: res.headers };
}

function describeCase(c: BodyCase): string {
  const text = c.body.toString("utf8");
  return `${c.kind} → ${c.endpoint} [${c.contentType}] ${text.length > 200 ? `${text.slice(0, 200)}… (${c.body.length} bytes)` : text}`;
}

async function check(c: BodyCase, before: State): Promise<State> {
  const res = await send(c);
  figures.tried++;
  figures.byStatus.set(res.status, (figures.byStatus.get(res.status) ?? 0) + 1);
  figures.byKind.set(c.kind, (figures.byKind.get(c.kind) ?? 0) + 1);
  if (res.status >= 500) figures.fiveXx++;
  scanner.response(res.status, res.headers, res.text, `PATCH ${c.endpoint}`);
  const where = describeCase(c);
  expect(res.status, where).toBe(c.expected.status);
  expect(res.contentType, where).toBe(JSON_TYPE);
  const body = JSON.parse(res.text) as Record<string, unknown>;

  if (c.expected.status !== 200) {
    figures.refused++;
    expect(Object.keys(body), where).toEqual(["error"]);
    const error = body.error as { code: string; message: string; details?: { path: string; message: string }[] };
    expect(error.code, where).toBe(CODES[c.expected.status]);
    expect(error.message.length, where).toBeGreaterThan(0);
    if (c.expected.status === 422) {
      expect(error.details?.length, where).toBeGreaterThan(0);
      for (const d of error.details!) expect(typeof d.path === "string" && d.message.length > 0, where).toBe(true);
    } else expect(error.details, where).toBeUndefined();
    const after = await stateNow();
    if (after.version !== before.version || after.tree !== before.tree) figures.changesOnRefusal++;
    expect(after, `a refused body changed the database or a file: ${where}`).toEqual(before);
    return before;
  }

  figures.accepted++;
  expect(body, where).toEqual(c.expected.stored);
  // The served file says what was stored, exactly (a <script> stays text in JSON, never markup).
  const org = await httpCall(served.url, { path: ORG, key: DEMO_READ_KEY });
  expect(org.headers["x-content-type-options"]).toBe("nosniff");
  const orgBody = JSON.parse(org.text) as Record<string, unknown>;
  for (const [key, value] of Object.entries(c.expected.stored)) expect(orgBody[key], where).toEqual(value);
  return stateNow();
}

describe("hostile bodies", () => {
  it(`${RUNS} generated bodies across both PATCHes get the D6/D7 answer, and refusals change nothing`, { timeout: budget(150_000) }, async () => {
    let state = await stateNow();
    await fc.assert(
      fc.asyncProperty(hostileBodyArb, async (c) => {
        state = await check(c, state);
        // Nothing a body said reached a prototype.
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
        expect(Object.getOwnPropertyNames(Object.prototype).sort().join()).toBe(protoNames);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    // Every family was exercised.
    expect(figures.byKind.size).toBeGreaterThanOrEqual(13);
    expect(figures.accepted).toBeGreaterThan(0);
    expect(figures.refused).toBeGreaterThan(RUNS / 2);
  });

  it("a stored <script> and bidi text come back byte for byte, as JSON text", async () => {
    const text = "<script>alert(1)</script> \u202Egnp.exe\u202C </script><img src=x onerror=alert(1)>";
    const before = await stateNow();
    const c: BodyCase = {
      kind: "script text",
      endpoint: "description",
      body: Buffer.from(JSON.stringify({ businessDescription: text })),
      contentType: "application/json",
      expected: { status: 200, stored: { businessDescription: text } },
    };
    await check(c, before);
    const raw = await readFile(`${site.out}/api/organizations/demo/organization.json`, "utf8");
    expect((JSON.parse(raw) as { businessDescription: string }).businessDescription).toBe(text);
  });
});

/** Peak resident memory of a process, in MB (Linux). */
async function peakRssMb(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => null);
  const match = status && /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : null;
}

describe("bodies far past 64 KiB", () => {
  const PIECE = Buffer.alloc(64 * 1024, 0x61);
  const TOTAL = 16 * 2 ** 20;

  function upload(url: string, i: number): Promise<WireAnswer> {
    const chunked = i % 2 === 0;
    const head =
      `PATCH ${i % 4 < 2 ? PATHS.description : PATHS.offers} HTTP/1.1\r\nHost: x\r\nx-api-key: ${DEMO_WRITE_KEY}\r\n` +
      "content-type: application/json\r\n" +
      (chunked ? "transfer-encoding: chunked\r\n\r\n" : `content-length: ${TOTAL}\r\n\r\n`);
    return onTheWire(url, head, async (socket, answered) => {
      socket.write(chunked ? Buffer.from('18\r\n{"businessDescription":"\r\n') : Buffer.from('{"businessDescription":"'));
      for (let sent = 0; sent < TOTAL && !socket.destroyed && !answered(); sent += PIECE.length) {
        const frame = chunked ? Buffer.concat([Buffer.from("10000\r\n"), PIECE, Buffer.from("\r\n")]) : PIECE;
        figures.bigBytesSent += PIECE.length;
        if (!socket.write(frame)) await new Promise((resolve) => (socket.once("drain", resolve), socket.once("close", resolve)));
      }
    });
  }

  // Framing tricks on the wire: contradicting lengths, smuggling attempts, broken chunk sizes.
  const FRAMING = [
    "content-length: 10\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{}\r\n0\r\n\r\n",
    "content-length: 5\r\ncontent-length: 7\r\n\r\n{}{}{}{",
    "content-length: -1\r\n\r\n{}",
    "content-length: 1e3\r\n\r\n{}",
    "transfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "transfer-encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    `content-length: ${2 ** 53}\r\n\r\n{}`,
  ];

  function record(answer: WireAnswer, what: string): void {
    figures.tried++;
    figures.byStatus.set(answer.status ?? 0, (figures.byStatus.get(answer.status ?? 0) ?? 0) + 1);
    figures.byKind.set("oversized and framing", (figures.byKind.get("oversized and framing") ?? 0) + 1);
    if ((answer.status ?? 0) >= 500) figures.fiveXx++;
    scanner.wire(answer, what);
    const where = `${what}: ${answer.error ?? ""} ${answer.text.slice(0, 300)}`;
    // The framing tricks are refused by the HTTP parser (400 bad_request) or, when they
    // still frame a body, that body is judged like any other.
    expect([400, 413, 422], where).toContain(answer.status);
    const body = JSON.parse(Buffer.from(answer.body, "latin1").toString("utf8")) as { error: { code: string } };
    const codes: Record<number, string[]> = { 400: ["bad_request", "malformed_json"], 413: ["payload_too_large"], 422: ["validation_failed"] };
    expect(codes[answer.status!], where).toContain(body.error.code);
  }

  it("16 MiB uploads, chunked and declared, are cut off with 413 round after round; the server's peak memory stops growing", { timeout: budget(60_000, 4) }, async () => {
    const cli = await startCliServer(site, ["--write-rate", "1000000"]);
    try {
      const before = await stateNow();
      const peaks: number[] = [];
      const first = await peakRssMb(cli.child.pid!);
      if (first !== null) peaks.push(first);
      for (let round = 0; round < scaled(2, 5); round++) {
        const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => upload(cli.url, i)));
        for (const answer of answers) {
          record(answer, "16 MiB upload");
          expect(answer.status).toBe(413);
          figures.bigStreams++;
        }
        const peak = await peakRssMb(cli.child.pid!);
        if (peak !== null) peaks.push(peak);
      }
      for (const rest of FRAMING) {
        const head = `PATCH ${PATHS.description} HTTP/1.1\r\nHost: x\r\nconnection: close\r\nx-api-key: ${DEMO_WRITE_KEY}\r\ncontent-type: application/json\r\n${rest}`;
        record(await onTheWire(cli.url, head, undefined, 10_000), "framing trick");
        figures.framing++;
      }
      figures.peakRss = peaks;
      if (peaks.length >= 3) {
        // Buffered uploads would add 256 MiB a round; dropped ones leave the peak where the first round put it.
        expect(peaks.at(-1)! - peaks[1]!).toBeLessThan(24);
        expect(peaks[1]! - peaks[0]!).toBeLessThan(96);
      }
      expect(await stateNow()).toEqual(before);
      const ok = await httpCall(cli.url, { path: ORG, key: DEMO_READ_KEY });
      expect(ok.status).toBe(200);
    } finally {
      await stopCliServer(cli);
      scanner.logs(cli.stdout().split("\n"), "cdsnap serve stdout");
      scanner.logs(cli.stderr().split("\n"), "cdsnap serve stderr");
    }
    expect(cli.stderr()).toBe("");
    expect(cli.stdout().split("\n").filter((l) => l.includes('"level":"error"'))).toEqual([]);
  });
});

describe("secrets", () => {
  it("no canary or key reached a response, a header, a log line or a file", async () => {
    // Responses were scanned as they came; now the server's log and every file beside the database.
    scanner.logs(served.logs, "server log");
    await scanner.scanFiles(site.dir);
    expect(scanner.found).toEqual([]);
    expect(scanner.responses).toBeGreaterThan(0);
  });
});
