/**
 * Behind the edge, the origin counts failed keys per visitor. The edge passes
 * every PATCH to `serve` (which checks its key), so every PATCH reaches
 * `serve` from the edge's address; the edge appends the visitor's address to
 * `X-Forwarded-For`, and `serve` started as docs/edge.md says
 * (`--client-address-header x-forwarded-for`) counts that. One visitor sending
 * bad keys is refused with 429; another's PATCHes, through the same edge, are
 * answered. In workerd (the visitor's address from CF-Connecting-IP, as
 * Workers sets it) and under Node (from the socket). Linux routes all of
 * 127/8 to the loopback: each visitor connects from an address of its own.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_WRITE_KEY } from "../../src/db/demo-seed.js";
import { startEdgeSite, type EdgeSite } from "../fixtures/edge-site.js";
import { api, expectError, type RawResponse } from "../fixtures/http.js";

const DESCRIPTION = api("demo", "business-description");

let site: EdgeSite;

beforeAll(async () => {
  // Three failures a minute per client: the fourth is refused. The origin's clock stands still, so no allowance refills, however slow the machine.
  const now = Date.now();
  site = await startEdgeSite({ serve: { authFailureRate: 3, clientAddressHeader: "x-forwarded-for", writeRate: 100_000, clock: () => now } });
}, 60_000);

afterAll(() => site?.close());

/** A PATCH from `localAddress`, its answer read as soon as it is whole (workerd keeps the connection open). */
function patchFrom(base: string, localAddress: string, key: string, text: string): Promise<RawResponse> {
  const body = JSON.stringify({ businessDescription: text });
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, method: "PATCH", path: DESCRIPTION, localAddress, agent: false, headers: { "x-api-key": key, "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const all = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: all, text: all.toString("utf8") });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe.each(["workerd", "node"] as const)("%s", (name) => {
  const base = () => site[name].url;
  // Addresses of their own per edge: the origin's counts outlive each test.
  const [guesser, visitor] = name === "workerd" ? ["127.0.0.2", "127.0.0.3"] : ["127.0.0.4", "127.0.0.5"];

  it("a visitor's bad keys get it 429 at the origin; another visitor's PATCHes through the same edge are answered", async () => {
    for (let i = 0; i < 3; i++) await expectError(await patchFrom(base(), guesser, `cds_guess_${i}`, "never"), 401, "unauthorized");
    await expectError(await patchFrom(base(), guesser, "cds_guess_3", "never"), 429, "rate_limited");
    // Refused before its key is looked at, a good one too.
    await expectError(await patchFrom(base(), guesser, DEMO_WRITE_KEY, "never"), 429, "rate_limited");
    const answered = await patchFrom(base(), visitor, DEMO_WRITE_KEY, `From another visitor of ${name}.`);
    expect(answered.status, answered.text).toBe(200);
  });
});
