/**
 * The limits on a request's head, on the wire, for both node:http servers
 * (`cdsnap serve` and `cdsnap edge serve`): at most 100 header fields, and at
 * most 16 KiB of request line, fields and the empty line after them, counted
 * as sent (each `: ` and CRLF included). A head exactly at a limit is served;
 * one past it gets `431 headers_too_large` with the D6 body and the connection
 * closed, as a head the parser itself refuses does; and the server goes on
 * serving everyone else. Node's own `maxHeaderSize` counts names and values
 * only, and its `maxHeadersCount` drops the fields past it and serves the
 * rest: neither alone keeps these promises.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { dumpBusinessTables } from "../fixtures/database.js";
import { api, expectError } from "../fixtures/http.js";
import { NODE_SERVERS, startNodeServers, type NodeServers } from "../fixtures/edge-site.js";
import { exchange, message, one, open, parseAnswers, type Answer } from "../fixtures/wire.js";

const MAX_FIELDS = 100;
const MAX_BYTES = 16 * 1024;

const ORG = api("demo", "organization");
const DESCRIPTION = api("demo", "business-description");
const CLOSE = "Connection: close";
const READ = ["Host: test", `x-api-key: ${DEMO_READ_KEY}`];

/** `count` small header fields (`x-f0: v` …) to pad a head with. */
const fillers = (count: number) => Array.from({ length: count }, (_, i) => `x-f${i}: v`);

/**
 * A GET of the organization with `fields` header fields in all whose head is
 * exactly `bytes` long as sent: the last filler's value takes up the rest.
 * Sent with `Connection: close` unless `connection` says otherwise.
 */
function headOf(bytes: number, fields: number, { method = "GET", connection = CLOSE } = {}): string {
  const lines = [...READ, connection, ...fillers(fields - READ.length - 1)];
  const short = bytes - Buffer.byteLength(message(method, ORG, lines));
  lines[lines.length - 1] += "v".repeat(short);
  const head = message(method, ORG, lines);
  expect({ bytes: Buffer.byteLength(head), fields: lines.length }).toEqual({ bytes, fields });
  return head;
}

/** A 431 as both servers send it: the D6 body, nothing cached, the connection closed. */
async function expectRefused(answer: Answer): Promise<void> {
  await expectError(answer, 431, "headers_too_large");
  expect(answer.headers["cache-control"]).toBe("no-store");
  expect(answer.headers.connection).toBe("close");
}

async function expectServed(answer: Answer): Promise<void> {
  expect(answer.status, answer.text).toBe(200);
  expect(JSON.parse(answer.text)).toMatchObject({ id: "demo", slug: "northwind" });
}

let servers: NodeServers;

beforeAll(async () => {
  servers = await startNodeServers({ writeRate: 100_000 });
});
afterAll(() => servers?.stop());

describe.each(NODE_SERVERS)("%s", (server) => {
  const url = () => servers.urls[server];

  it("serves a head of exactly 16 KiB, in 100 header fields or in four", async () => {
    for (const fields of [MAX_FIELDS, 4]) await expectServed(await one(url(), headOf(MAX_BYTES, fields)));
  });

  it("refuses a head one byte over 16 KiB with 431 headers_too_large, in 100 header fields or in four", async () => {
    for (const fields of [MAX_FIELDS, 4]) await expectRefused(await one(url(), headOf(MAX_BYTES + 1, fields)));
  });

  it("serves 100 header fields and refuses 101 with 431, however small the head", async () => {
    const small = (count: number) => message("GET", ORG, [...READ, CLOSE, ...fillers(count - READ.length - 1)]);
    expect(Buffer.byteLength(small(MAX_FIELDS + 1))).toBeLessThan(2_000);
    await expectServed(await one(url(), small(MAX_FIELDS)));
    await expectRefused(await one(url(), small(MAX_FIELDS + 1)));
  });

  it("refuses 2,000 tiny header fields, under Node's 16 KiB of names and values but 19 KB on the wire", async () => {
    const tiny = Array.from({ length: 2_000 }, (_, i) => `a${i}: b`);
    const head = message("GET", ORG, [...READ, CLOSE, ...tiny]);
    const namesAndValues = [...READ, CLOSE, ...tiny].reduce((sum, line) => sum + line.length - 2, ORG.length);
    expect(namesAndValues).toBeLessThan(MAX_BYTES);
    expect(Buffer.byteLength(head)).toBeGreaterThan(19_000);
    await expectRefused(await one(url(), head));
  });

  it("answers a HEAD refused for its head with the 431's headers and no body", async () => {
    const [answer] = await exchange(url(), headOf(MAX_BYTES + 1, 4, { method: "HEAD" }), { head: true });
    expect(answer!.status).toBe(431);
    expect(answer!.body.length).toBe(0);
    expect(Number(answer!.headers["content-length"])).toBeGreaterThan(0);
  });

  it("refuses a head over a limit exactly as the parser refuses one over its own", async () => {
    const parser = await one(url(), message("GET", ORG, [...READ, CLOSE, `x-big: ${"v".repeat(20_000)}`]));
    const counted = await one(url(), headOf(MAX_BYTES + 1, MAX_FIELDS));
    const withoutDate = (answer: Answer) => answer.fields.filter(([name]) => name !== "date");
    expect(counted.statusLine).toBe(parser.statusLine);
    expect(withoutDate(counted)).toEqual(withoutDate(parser));
    expect(counted.text).toBe(parser.text);
    await expectRefused(parser);
  });

  it("closes the refused request's connection: the request before it is answered, the one after it never", async () => {
    const before = message("GET", ORG, READ);
    const after = message("GET", ORG, [...READ, CLOSE]);
    const answers = await exchange(url(), before + headOf(MAX_BYTES + 1, 4, { connection: "Connection: keep-alive" }) + after);
    expect(answers.map((a) => a.status)).toEqual([200, 431]);
    await expectServed(answers[0]!);
    await expectRefused(answers[1]!);
  });

  it("refuses a PATCH with 101 header fields before reading it: nothing is stored", async () => {
    const rows = dumpBusinessTables(servers.site.db);
    const body = JSON.stringify({ businessDescription: "never stored" });
    const fields = ["Host: test", `x-api-key: ${DEMO_WRITE_KEY}`, "Content-Type: application/json", `Content-Length: ${body.length}`, CLOSE];
    const request = message("PATCH", DESCRIPTION, [...fields, ...fillers(MAX_FIELDS + 1 - fields.length)], body);
    await expectRefused(await one(url(), request));
    expect(dumpBusinessTables(servers.site.db)).toBe(rows);
  });

  it("goes on serving a connection opened before the refusals, and new ones", async () => {
    const held = await open(url());
    held.socket.write(message("GET", ORG, READ));
    await expectServed((await held.answered(1))[0]!);
    for (let i = 0; i < 5; i++) await expectRefused(await one(url(), headOf(MAX_BYTES + 1 + i, 4 + i)));
    held.socket.write(message("GET", ORG, [...READ, CLOSE]));
    const answers = parseAnswers(await held.ended);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    await expectServed(answers[1]!);
    await expectServed(await one(url(), message("GET", ORG, [...READ, CLOSE])));
  });
});
