/**
 * Area 3, authorization: every endpoint x every caller x every method gets
 * the D5 answer. Callers: no key, an empty one, an unknown one, keys revoked
 * with `cdsnap keys revoke` while the server runs, both keys of another
 * organization, and the organization's own read and write keys. Nothing but
 * the own write key changes a row or a file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";
import { buildFixture, removeFixture } from "../fixtures/build-fixture.js";
import { dumpBusinessTables } from "../fixtures/database.js";
import { statSnapshot } from "../fixtures/tree.js";
import { runCliBounded } from "../fixtures/cli.js";
import { makeSite, type Served, serveSite, type Site } from "../fixtures/served-site.js";
import { api, httpCall } from "../fixtures/http.js";
import { plantCanarySecrets, SecretScanner, secretsOf } from "../fixtures/secrets.js";
import { budget, printFigures, scaled } from "../fixtures/soak.js";
import { pollUntil } from "../fixtures/wait.js";

let site: Site;
let served: Served;
let scanner: SecretScanner;
const keys: Record<string, string | null> = {};
const figures = { requests: 0, wrong: 0, byAnswer: new Map<string, number>() };

async function createKey(org: string, scopes: string): Promise<{ key: string; id: string }> {
  const run = await runCliBounded(["keys", "create", "--db", site.db, "--org", org, "--scopes", scopes, "--json"]);
  expect(run.code, run.stderr).toBe(0);
  const created = JSON.parse(run.stdout) as { key: string; id: string };
  return created;
}

beforeAll(async () => {
  site = await makeSite({ built: false });
  const canaries = plantCanarySecrets(site.db);
  await buildFixture(site);
  // Every refused caller many times over from one address: the failure limit is not what this area probes.
  served = await serveSite(site, { writeRate: 1_000_000_000, authFailureRate: 1_000_000_000, authRefreshMs: 100 });
  const harborWrite = await createKey("harbor", "read,write");
  const revokedRead = await createKey("demo", "read");
  const revokedWrite = await createKey("demo", "read,write");
  for (const id of [revokedRead.id, revokedWrite.id]) {
    const run = await runCliBounded(["keys", "revoke", id, "--db", site.db]);
    expect(run.code, run.stderr).toBe(0);
  }
  Object.assign(keys, {
    none: null,
    empty: "",
    unknown: "cds_not-a-key-0000000000000000000000000000",
    "revoked read": revokedRead.key,
    "revoked write": revokedWrite.key,
    "harbor read": HARBOR_READ_KEY,
    "harbor write": harborWrite.key,
    "demo read": DEMO_READ_KEY,
    "demo write": DEMO_WRITE_KEY,
  });
  scanner = new SecretScanner(secretsOf(canaries, [harborWrite.key, revokedRead.key, revokedWrite.key]));
  // The running server sees the revocations (made by another process) within its refresh interval.
  expect(
    await pollUntil(async () => (await httpCall(served.url, { path: api("demo", "organization"), key: revokedRead.key })).status === 401, 30_000),
  ).toBe(true);
});

afterAll(async () => {
  await served?.close();
  await removeFixture(site);
  const answers = [...figures.byAnswer].sort().map(([a, n]) => `${n} x ${a}`).join(", ");
  printFigures(`authorization: ${figures.requests} requests (${answers}), ${figures.wrong} not the D5 answer`);
  printFigures(`authorization, secrets: ${scanner?.summary()}`);
});

type Kind = "read" | "write" | "none";
/** Where a GET finds a file: every built organization (lists), demo only (demo's items), or nowhere. */
type Exists = "every org" | "demo" | "nowhere";
const ENDPOINTS: { path: (org: string) => string; kind: Kind; exists: Exists }[] = [
  { path: (o) => api(o, "blocks"), kind: "read", exists: "every org" },
  { path: (o) => `${api(o, "blocks")}?pages=home`, kind: "read", exists: "every org" },
  // harbor reuses demo's block id and slug (separate namespaces)
  { path: (o) => api(o, "blocks/blk-hero"), kind: "read", exists: "every org" },
  { path: (o) => api(o, "blocks/by-slug/home-hero"), kind: "read", exists: "every org" },
  { path: (o) => api(o, "organization"), kind: "read", exists: "every org" },
  { path: (o) => api(o, "contents"), kind: "read", exists: "every org" },
  { path: (o) => api(o, "contents/post-0001"), kind: "read", exists: "demo" },
  { path: (o) => api(o, "contents/post-0001/references"), kind: "read", exists: "demo" },
  { path: (o) => api(o, "categories"), kind: "read", exists: "every org" },
  { path: (o) => api(o, "blocks/blk-missing"), kind: "read", exists: "nowhere" },
  { path: (o) => api(o, "contents/by-slug/no-such-post"), kind: "read", exists: "nowhere" },
  { path: (o) => api(o, "business-description"), kind: "write", exists: "every org" },
  { path: (o) => api(o, "business-offers"), kind: "write", exists: "every org" },
  { path: (o) => api(o, "settings"), kind: "none", exists: "nowhere" },
];
const ORGS = ["demo", "harbor", "no-such-org"];
const METHODS = ["GET", "HEAD", "PATCH", "POST", "PUT", "DELETE", "OPTIONS"];

/** D5, D6 and D11 in the order the interface implies: preflight, key, path, organization, method, scope. */
function d5Answer(caller: string, org: string, kind: Kind, exists: Exists, method: string): string {
  if (method === "OPTIONS") return kind === "none" ? "404 not_found" : "204";
  const callerOrg = caller.startsWith("demo") ? "demo" : caller.startsWith("harbor") ? "harbor" : null;
  if (callerOrg === null) return "401 unauthorized";
  if (kind === "none") return "404 not_found";
  if (callerOrg !== org) return "403 forbidden";
  if (kind === "write") {
    if (method !== "PATCH") return "405 method_not_allowed";
    return caller.endsWith("write") ? "200" : "403 insufficient_scope";
  }
  if (method !== "GET" && method !== "HEAD") return "405 method_not_allowed";
  return exists === "every org" || (exists === "demo" && org === "demo") ? "200" : "404 not_found";
}

function bodyFor(path: string, n: number): string {
  return path.endsWith("business-offers")
    ? JSON.stringify({ businessOffers: [{ name: `Offer ${n}`, description: "Written by the authorization test." }] })
    : JSON.stringify({ businessDescription: `Written by the authorization test, request ${n}.` });
}

describe("authorization", () => {
  it("every endpoint x caller x method answers as D5 says; only the own write key writes", { timeout: budget(60_000) }, async () => {
    let n = 0;
    for (let round = 0; round < scaled(1, 5); round++) {
      for (const [caller, key] of Object.entries(keys)) {
        for (const org of ORGS) {
          for (const endpoint of ENDPOINTS) {
            for (const method of METHODS) {
              const target = endpoint.path(org);
              const body = ["PATCH", "POST", "PUT"].includes(method) ? bodyFor(target, n++) : undefined;
              const res = await httpCall(served.url, {
                method,
                path: target,
                key: key ?? undefined,
                headers: body ? { "content-type": "application/json" } : {},
                body,
              });
              figures.requests++;
              scanner.response(res.status, res.headers, res.text, `${method} ${target} as ${caller}`);
              const code = res.status >= 400 && method !== "HEAD" ? ` ${(JSON.parse(res.text) as { error: { code: string } }).error.code}` : "";
              const got = `${res.status}${code}`;
              let wanted = d5Answer(caller, org, endpoint.kind, endpoint.exists, method);
              // HEAD carries no body, so only the status can be compared.
              if (method === "HEAD") wanted = wanted.split(" ")[0]!;
              figures.byAnswer.set(got, (figures.byAnswer.get(got) ?? 0) + 1);
              if (got !== wanted) figures.wrong++;
              expect(got, `${method} ${target} as ${caller}`).toBe(wanted);
              if (res.status === 405) expect(res.headers.allow).toMatch(/OPTIONS/);
            }
          }
        }
      }
    }
    expect(figures.wrong).toBe(0);
  });

  it("refused writes change nothing: a matrix of every refused caller on both PATCH paths leaves rows and files as they were", async () => {
    const rows = dumpBusinessTables(site.db);
    const tree = statSnapshot(site.stateDir);
    for (const [caller, key] of Object.entries(keys)) {
      if (caller === "demo write") continue;
      for (const org of ["demo"]) {
        for (const p of [api(org, "business-description"), api(org, "business-offers")]) {
          const res = await httpCall(served.url, { method: "PATCH", path: p, key: key ?? undefined, headers: { "content-type": "application/json" }, body: bodyFor(p, 0) });
          figures.requests++;
          expect([401, 403], `${caller} ${p}`).toContain(res.status);
        }
      }
    }
    expect(dumpBusinessTables(site.db)).toBe(rows);
    expect(statSnapshot(site.stateDir)).toBe(tree);
  });

  it("no key, secret or canary reached a response, the log or a file", async () => {
    scanner.logs(served.logs, "server log");
    await scanner.scanFiles(site.dir);
    expect(scanner.found).toEqual([]);
  });
});
