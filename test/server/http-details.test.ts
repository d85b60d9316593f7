/**
 * The HTTP details of issue 11, on the wire: pipelined requests see the writes
 * before them, Range is ignored, an absolute-form target is served, duplicate
 * Host and Content-Type fields are refused, the answers Node's parser would
 * make on its own (no Host, an unknown Expect) carry the D6 body, a PATCH with
 * `Expect: 100-continue` is refused before `100 Continue` when its headers
 * already decide it, and failed authentication is rate limited per address.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../../src/db/keys.js";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { removeFixture as removeSite } from "../fixtures/build-fixture.js";
import { dumpBusinessTables, withDb } from "../fixtures/database.js";
import { makeSite, type Served, startCliServer, startSite, stopCliServer } from "../fixtures/served-site.js";
import { api, expectError } from "../fixtures/http.js";
import { exchange, message, one, open, parseAnswers, type Answer } from "../fixtures/wire.js";

type Site = Served & { stop(): Promise<void> };

const ORG = api("demo", "organization");
const DESCRIPTION = api("demo", "business-description");
const POST = api("demo", "contents/post-0011");

// --------------------------------------------------------------- the wire

/** A JSON PATCH with Host, key, type and length; `extra` lines come after those. */
function patch(target: string, key: string | null, body: string, extra: string[] = []): string {
  const fields = ["Host: test", ...(key === null ? [] : [`x-api-key: ${key}`]), "Content-Type: application/json"];
  return message("PATCH", target, [...fields, `Content-Length: ${Buffer.byteLength(body)}`, ...extra], body);
}

function get(target: string, extra: string[] = [], key = DEMO_READ_KEY): string {
  return message("GET", target, ["Host: test", `x-api-key: ${key}`, ...extra]);
}

const description = (answer: Answer) => (JSON.parse(answer.text) as { businessDescription: string }).businessDescription;
const CLOSE = "Connection: close";

// ------------------------------------------------------------------ tests

describe("pipelined requests on one connection (RFC 9112 §9.3.2)", () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ writeRate: 100_000 });
  });
  afterAll(() => site?.stop());

  it("a GET pipelined right behind a PATCH answers the organization that PATCH stored", async () => {
    const body = JSON.stringify({ businessDescription: "Stored before the GET behind it" });
    const [patched, read] = await exchange(site.url, patch(DESCRIPTION, DEMO_WRITE_KEY, body) + get(ORG, [CLOSE]));
    expect([patched!.status, read!.status]).toEqual([200, 200]);
    expect(description(read!)).toBe("Stored before the GET behind it");
    expect(read!.headers.etag).toBe(patched!.headers.etag);
  });

  it("GET, PATCH, refused PATCH, GET on one connection: answered in order, each seeing the writes before it only", async () => {
    const before = description(await one(site.url, get(ORG, [CLOSE])));
    const first = JSON.stringify({ businessDescription: "The write the last GET sees" });
    const refused = JSON.stringify({ businessDescription: 5 });
    const answers = await exchange(
      site.url,
      get(ORG) + patch(DESCRIPTION, DEMO_WRITE_KEY, first) + patch(DESCRIPTION, DEMO_WRITE_KEY, refused) + get(ORG, [CLOSE]),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 422, 200]);
    expect(description(answers[0]!)).toBe(before);
    await expectError(answers[2]!, 422, "validation_failed");
    expect(description(answers[3]!)).toBe("The write the last GET sees");
  });
});

describe("Range is ignored: a JSON document is answered whole", () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite();
  });
  afterAll(() => site?.stop());

  const withoutDate = (answer: Answer) => answer.fields.filter(([name]) => name !== "date");

  it.each([
    ["a first-bytes range", "bytes=0-9"],
    ["an open-ended range", "bytes=10-"],
    ["a suffix range", "bytes=-5"],
    ["several ranges", "bytes=0-0,5-9,-1"],
    ["an unsatisfiable range", "bytes=999999999-"],
    ["a malformed range", "bytes=9-1"],
    ["another unit", "items=0-1"],
  ])("%s (%s) gets the 200 of a plain GET, headers and bytes, on a file and a ?pages= list", async (_name, range) => {
    for (const target of [POST, api("demo", "blocks?pages=home")]) {
      const plain = await one(site.url, get(target, [CLOSE]));
      const ranged = await one(site.url, get(target, [`Range: ${range}`, CLOSE]));
      expect(ranged.statusLine).toBe("HTTP/1.1 200 OK");
      expect(withoutDate(ranged)).toEqual(withoutDate(plain));
      expect(ranged.body.equals(plain.body)).toBe(true);
      expect(ranged.headers["content-range"]).toBeUndefined();
      expect(ranged.headers["accept-ranges"]).toBe("none");
    }
  });

  it("HEAD and If-Range with a Range get the whole 200's headers", async () => {
    const plain = await one(site.url, get(POST, [CLOSE]));
    const head = await one(site.url, message("HEAD", POST, ["Host: test", `x-api-key: ${DEMO_READ_KEY}`, "Range: bytes=0-9", CLOSE]), {
      head: true,
    });
    expect(head.statusLine).toBe("HTTP/1.1 200 OK");
    expect(withoutDate(head)).toEqual(withoutDate(plain));
    const ifRange = await one(site.url, get(POST, ["Range: bytes=0-9", `If-Range: ${plain.headers.etag}`, CLOSE]));
    expect(ifRange.statusLine).toBe("HTTP/1.1 200 OK");
    expect(ifRange.body.equals(plain.body)).toBe(true);
  });
});

describe("the request line and header fields", () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ writeRate: 100_000 });
  });
  afterAll(() => site?.stop());

  it("an absolute-form target is served exactly like its origin form, whatever authority it names", async () => {
    const { host } = new URL(site.url);
    for (const target of [ORG, api("demo", "blocks?pages=home")]) {
      const origin = await one(site.url, get(target, [CLOSE]));
      expect(origin.status).toBe(200);
      for (const authority of [`http://${host}`, "http://example.com", "HTTPS://cdn.example.com:8443"]) {
        const absolute = await one(site.url, get(`${authority}${target}`, [CLOSE]));
        expect(absolute.status, authority).toBe(200);
        expect(absolute.body.equals(origin.body), authority).toBe(true);
        expect(absolute.headers.etag).toBe(origin.headers.etag);
      }
    }
    const logged = site.logs.filter((line) => line.status === 200).map((line) => line.path);
    expect(logged.every((p) => typeof p === "string" && p.startsWith("/api/"))).toBe(true);
  });

  it("an absolute-form PATCH writes like its origin form", async () => {
    const body = JSON.stringify({ businessDescription: "Written through an absolute-form target" });
    const answer = await one(site.url, patch(`http://example.com${DESCRIPTION}`, DEMO_WRITE_KEY, body, [CLOSE]));
    expect(answer.status).toBe(200);
    expect(description(await one(site.url, get(ORG, [CLOSE])))).toBe("Written through an absolute-form target");
  });

  it("two Host header fields answer 400 bad_request, equal or not, on a GET and a PATCH", async () => {
    const before = dumpBusinessTables(site.db);
    for (const hosts of [["Host: test", "Host: test"], ["Host: a.example", "Host: b.example"]]) {
      const read = message("GET", ORG, [...hosts, `x-api-key: ${DEMO_READ_KEY}`, CLOSE]);
      await expectError(await one(site.url, read), 400, "bad_request");
      const write = patch(DESCRIPTION, DEMO_WRITE_KEY, JSON.stringify({ businessDescription: "never stored" }), [hosts[1]!, CLOSE]);
      await expectError(await one(site.url, write.replace("Host: test", hosts[0]!)), 400, "bad_request");
    }
    expect(dumpBusinessTables(site.db)).toBe(before);
  });

  it("two Content-Type header fields on a PATCH answer 415 unsupported_media_type, even both JSON", async () => {
    const before = dumpBusinessTables(site.db);
    const body = JSON.stringify({ businessDescription: "never stored" });
    for (const second of ["Content-Type: application/json", "content-type: text/plain"]) {
      const answer = await one(site.url, patch(DESCRIPTION, DEMO_WRITE_KEY, body, [second, CLOSE]));
      await expectError(answer, 415, "unsupported_media_type");
    }
    expect(dumpBusinessTables(site.db)).toBe(before);
  });

  it("an HTTP/1.1 request without Host answers 400 bad_request with the D6 body; HTTP/1.0 needs none", async () => {
    const answer = await one(site.url, message("GET", ORG, [`x-api-key: ${DEMO_READ_KEY}`, CLOSE]));
    await expectError(answer, 400, "bad_request");
    expect(answer.headers["cache-control"]).toBe("no-store");
    const old = await one(site.url, message("GET", ORG, [`x-api-key: ${DEMO_READ_KEY}`], "", "1.0"));
    expect(old.status).toBe(200);
    expect(JSON.parse(old.text)).toMatchObject({ id: "demo" });
  });

  it("an Expect other than 100-continue answers 417 expectation_failed with the D6 body", async () => {
    for (const request of [get(ORG, ["Expect: 200-ok", CLOSE]), patch(DESCRIPTION, DEMO_WRITE_KEY, "{}", ["Expect: x", CLOSE])]) {
      const answer = await one(site.url, request);
      await expectError(answer, 417, "expectation_failed");
    }
  });
});

describe("Expect: 100-continue", () => {
  let site: Site;
  let revokedKey: string;
  beforeAll(async () => {
    site = await startSite({ writeRate: 100_000 });
    revokedKey = withDb(site.db, (db) => {
      const created = createKey(db, { orgId: "demo", scopes: ["read", "write"], label: "revoked" });
      revokeKey(db, created.record.id);
      return created.rawKey;
    });
  });
  afterAll(() => site?.stop());

  const BODY = JSON.stringify({ businessDescription: "never stored" });
  /** The head of a PATCH waiting for 100 Continue: its body is never sent. */
  function waiting(key: string | null, extra: string[], length = BODY.length, target = DESCRIPTION): string {
    const fields = ["Host: test", ...(key === null ? [] : [`x-api-key: ${key}`]), "Expect: 100-continue"];
    const typed = extra.some((f) => /^content-type:/i.test(f)) ? extra : ["Content-Type: application/json", ...extra];
    return message("PATCH", target, [...fields, ...typed, `Content-Length: ${length}`]);
  }

  /** What the server writes within 500 ms of the head alone: the one final answer, never a 100. */
  async function refusal(head: string): Promise<Answer> {
    const conn = await open(site.url);
    conn.socket.write(head);
    const wire = await conn.after(500);
    conn.socket.destroy();
    expect(wire.toString("latin1")).not.toContain("100 Continue");
    const answers = parseAnswers(wire);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.headers.connection).toBe("close");
    return answers[0]!;
  }

  it.each([
    ["no key", () => waiting(null, []), 401, "unauthorized"],
    ["an unknown key", () => waiting("cds_not_a_key", []), 401, "unauthorized"],
    ["a revoked key", () => waiting(revokedKey, []), 401, "unauthorized"],
    ["another organization's key", () => waiting(HARBOR_READ_KEY, []), 403, "forbidden"],
    ["a read-only key", () => waiting(DEMO_READ_KEY, []), 403, "insufficient_scope"],
    ["a declared length over 64 KiB", () => waiting(DEMO_WRITE_KEY, [], 64 * 1024 + 1), 413, "payload_too_large"],
    ["a body that is not JSON", () => waiting(DEMO_WRITE_KEY, ["Content-Type: text/plain"]), 415, "unsupported_media_type"],
    ["two Content-Types", () => waiting(DEMO_WRITE_KEY, ["Content-Type: application/json", "content-type: application/json"]), 415, "unsupported_media_type"],
  ])("%s is refused before 100 Continue", async (_name, head, status, code) => {
    const before = dumpBusinessTables(site.db);
    await expectError(await refusal(head()), status, code);
    expect(dumpBusinessTables(site.db)).toBe(before);
  });

  it("a PATCH within the write rate gets 100 Continue, then its 200; the one over it gets 429 and no 100", async () => {
    const limited = await startSite({ writeRate: 1 });
    try {
      const body = JSON.stringify({ businessDescription: "Sent after 100 Continue" });
      const conn = await open(limited.url);
      conn.socket.write(waiting(DEMO_WRITE_KEY, [], body.length).replace(/\r\n\r\n$/, `\r\n${CLOSE}\r\n\r\n`));
      expect((await conn.after(300)).toString("latin1")).toBe("HTTP/1.1 100 Continue\r\n\r\n");
      conn.socket.write(body);
      const [interim, final] = parseAnswers(await conn.ended);
      expect(interim!.status).toBe(100);
      expect(final!.status).toBe(200);
      expect(description(final!)).toBe("Sent after 100 Continue");

      const over = await open(limited.url);
      over.socket.write(waiting(DEMO_WRITE_KEY, []));
      const wire = await over.after(500);
      over.socket.destroy();
      expect(wire.toString("latin1")).not.toContain("100 Continue");
      const [answer] = parseAnswers(wire);
      expect(answer!.headers["retry-after"]).toMatch(/^[1-9]\d*$/);
      await expectError(answer!, 429, "rate_limited");
    } finally {
      await limited.stop();
    }
  });
});

describe("failed authentication is rate limited per client address", () => {
  /** Three failures a minute: a token every 20 s. */
  async function limitedSite(options: { clientAddressHeader?: string } = {}): Promise<Site & { advance(ms: number): void }> {
    let now = Date.parse("2026-07-01T00:00:00Z");
    const site = await startSite({ authFailureRate: 3, clock: () => now, ...options });
    return Object.assign(site, { advance: (ms: number) => (now += ms) });
  }

  it("the failure after the allowance gets 429 with Retry-After, a valid key too, until the bucket refills", async () => {
    const site = await limitedSite();
    try {
      const failures = [
        message("GET", ORG, ["Host: test", CLOSE]),
        get(ORG, [CLOSE], "cds_not_a_key"),
        patch(DESCRIPTION, "cds_not_a_key", JSON.stringify({ businessDescription: "x" }), [CLOSE]),
      ];
      for (const request of failures) await expectError(await one(site.url, request), 401, "unauthorized");

      const limited = await one(site.url, get(ORG, [CLOSE], "cds_another_guess"));
      await expectError(limited, 429, "rate_limited");
      expect(limited.headers["retry-after"]).toBe("20");
      const valid = await one(site.url, get(ORG, [CLOSE]));
      await expectError(valid, 429, "rate_limited");

      site.advance(20_000);
      // Successes are not counted: the one token refilled stays for a failure.
      for (let i = 0; i < 5; i++) expect((await one(site.url, get(ORG, [CLOSE]))).status).toBe(200);
      await expectError(await one(site.url, get(ORG, [CLOSE], "cds_guess")), 401, "unauthorized");
      await expectError(await one(site.url, get(ORG, [CLOSE], "cds_guess")), 429, "rate_limited");
    } finally {
      await site.stop();
    }
  });

  it("another address is not limited by this one's failures", async () => {
    const site = await limitedSite();
    try {
      for (let i = 0; i < 3; i++) await one(site.url, get(ORG, [CLOSE], "cds_not_a_key"));
      await expectError(await one(site.url, get(ORG, [CLOSE], "cds_not_a_key")), 429, "rate_limited");
      const other = { localAddress: "127.0.0.2" };
      expect((await one(site.url, get(ORG, [CLOSE]), other)).status).toBe(200);
      await expectError(await one(site.url, get(ORG, [CLOSE], "cds_not_a_key"), other), 401, "unauthorized");
    } finally {
      await site.stop();
    }
  });

  it("behind a proxy, the address its header names is counted: the last entry, whatever the client wrote before it", async () => {
    const site = await limitedSite({ clientAddressHeader: "X-Forwarded-For" });
    try {
      const from = (chain: string, key = "cds_not_a_key") => get(ORG, [CLOSE, `X-Forwarded-For: ${chain}`], key);
      for (let i = 0; i < 3; i++) await expectError(await one(site.url, from("203.0.113.1")), 401, "unauthorized");
      await expectError(await one(site.url, from("203.0.113.1")), 429, "rate_limited");
      // A forged first entry changes nothing: the proxy appended the real one last.
      await expectError(await one(site.url, from("198.51.100.9, 203.0.113.1")), 429, "rate_limited");
      // Another client behind the same edge (same socket address) is not limited.
      await expectError(await one(site.url, from("203.0.113.1, 203.0.113.2")), 401, "unauthorized");
      expect((await one(site.url, from("203.0.113.2", DEMO_READ_KEY))).status).toBe(200);
    } finally {
      await site.stop();
    }
  });

  it("without --client-address-header a forwarded address is ignored: the socket's address is counted", async () => {
    const site = await limitedSite();
    try {
      for (let i = 0; i < 3; i++) {
        await expectError(await one(site.url, get(ORG, [CLOSE, `X-Forwarded-For: 203.0.113.${i}`], "cds_not_a_key")), 401, "unauthorized");
      }
      await expectError(await one(site.url, get(ORG, [CLOSE, "X-Forwarded-For: 203.0.113.99"], "cds_not_a_key")), 429, "rate_limited");
    } finally {
      await site.stop();
    }
  });

  it("without --client-address-header, serve says once in its log that requests come through a proxy", async () => {
    const forwardedNotes = (lines: Record<string, unknown>[]) => lines.filter((line) => line.msg === "forwarded without --client-address-header");
    const plain: Record<string, unknown>[] = [];
    const proxied: Record<string, unknown>[] = [];
    const configured: Record<string, unknown>[] = [];
    const sites = [
      await startSite({ log: (line) => plain.push(line) }),
      await startSite({ log: (line) => proxied.push(line) }),
      await startSite({ log: (line) => configured.push(line), clientAddressHeader: "x-forwarded-for" }),
    ];
    try {
      for (let i = 0; i < 3; i++) expect((await one(sites[0]!.url, get(ORG, [CLOSE]))).status).toBe(200);
      expect(forwardedNotes(plain)).toEqual([]);
      for (const via of ["X-Forwarded-For: 203.0.113.1", "Forwarded: for=203.0.113.2", "X-Forwarded-For: 203.0.113.3"]) {
        expect((await one(sites[1]!.url, get(ORG, [CLOSE, via]))).status).toBe(200);
        expect((await one(sites[2]!.url, get(ORG, [CLOSE, via]))).status).toBe(200);
      }
      const notes = forwardedNotes(proxied);
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({ level: "warn" });
      expect(String(notes[0]!.detail)).toContain("--client-address-header");
      expect(forwardedNotes(configured)).toEqual([]);
    } finally {
      for (const site of sites) await site.stop();
    }
  });

  it("the default allows 30 failures a minute; 0 turns the limit off", async () => {
    const byDefault = await startSite();
    try {
      for (let i = 0; i < 30; i++) await expectError(await one(byDefault.url, get(ORG, [CLOSE], `cds_guess_${i}`)), 401, "unauthorized");
      await expectError(await one(byDefault.url, get(ORG, [CLOSE], "cds_guess_30")), 429, "rate_limited");
    } finally {
      await byDefault.stop();
    }
    const off = await startSite({ authFailureRate: 0 });
    try {
      for (let i = 0; i < 40; i++) await expectError(await one(off.url, get(ORG, [CLOSE], `cds_guess_${i}`)), 401, "unauthorized");
    } finally {
      await off.stop();
    }
  });

  it("cdsnap serve takes the limit from --auth-failure-rate and CDSNAP_AUTH_FAILURE_RATE", async () => {
    const site = await makeSite();
    try {
      for (const start of [
        () => startCliServer(site, ["--auth-failure-rate", "2"]),
        () => startCliServer(site, [], { CDSNAP_AUTH_FAILURE_RATE: "2" }),
      ]) {
        const cli = await start();
        try {
          for (let i = 0; i < 2; i++) await expectError(await one(cli.url, get(ORG, [CLOSE], "cds_guess")), 401, "unauthorized");
          await expectError(await one(cli.url, get(ORG, [CLOSE], "cds_guess")), 429, "rate_limited");
        } finally {
          await stopCliServer(cli);
        }
      }
    } finally {
      await removeSite(site);
    }
  });
});
