/**
 * Every method gets an answer, on the wire, from both node:http servers
 * (`cdsnap serve` and `cdsnap edge serve`): docs/api.md promises 405 with the
 * D6 body for a method a path does not take. CONNECT is the one node:http
 * hands apart from the request handler (left alone, it closes the connection
 * with no answer); a method token the parser does not know is refused by the
 * parser itself, with 400.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { api, expectError } from "../fixtures/http.js";
import { NODE_SERVERS, startNodeServers, type NodeServers } from "../fixtures/edge-site.js";
import { message, one } from "../fixtures/wire.js";

const ORG = api("demo", "organization");
const READ = ["Host: test", `x-api-key: ${DEMO_READ_KEY}`];

let servers: NodeServers;

beforeAll(async () => {
  servers = await startNodeServers();
});
afterAll(() => servers?.stop());

describe.each(NODE_SERVERS)("%s", (server) => {
  const url = () => servers.urls[server];

  it.each(["127.0.0.1:22", "test:443", ORG])("CONNECT %s: 405 method_not_allowed with the D6 body, the connection closed", async (target) => {
    const answer = await one(url(), message("CONNECT", target, READ));
    await expectError(answer, 405, "method_not_allowed");
    expect(answer.headers.allow).toBe("GET, HEAD, PATCH, OPTIONS");
    expect(answer.headers["cache-control"]).toBe("no-store");
    expect(answer.headers.connection).toBe("close");
    // The server goes on answering.
    const after = await one(url(), message("GET", ORG, [...READ, "Connection: close"]));
    expect(after.status).toBe(200);
  });

  it.each(["TRACE", "PUT", "DELETE", "POST", "PROPFIND"])("%s of a file: 405 with the path's Allow and the D6 body", async (method) => {
    const answer = await one(url(), message(method, ORG, [...READ, "Content-Length: 0", "Connection: close"]));
    await expectError(answer, 405, "method_not_allowed");
    expect(answer.headers.allow).toBe("GET, HEAD, OPTIONS");
  });

  it("TRACE without a key: 401, the key checked first as for any method", async () => {
    await expectError(await one(url(), message("TRACE", ORG, ["Host: test", "Connection: close"])), 401, "unauthorized");
  });

  it("a method the parser does not know: 400 bad_request with the D6 body", async () => {
    const answer = await one(url(), message("BREW", ORG, [...READ, "Connection: close"]));
    await expectError(answer, 400, "bad_request");
    expect(answer.headers.connection).toBe("close");
  });
});
