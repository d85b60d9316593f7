/**
 * How long a change takes to reach the edge, measured on the demo site:
 *
 * - a revocation: from the moment `cdsnap keys revoke … --out` exits until a
 *   request with that key is refused, at `cdsnap serve`, at the edge handler
 *   under Node (`edge serve`, reading the document every second) and in
 *   workerd (`edge dev`, which puts the document into KV as a deployment's
 *   pipeline would);
 * - a build: from the moment `cdsnap build` exits until the edited post is
 *   answered by each.
 *
 * Every target is polled every 5 ms. Run after `npm run build:cli`:
 *
 *     node bench/bundle.mjs && node dist/bench/edge-latency.js [rounds]
 */
import { execFileSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEMO_READ_KEY } from "../src/db/demo-seed.js";
import { startEdgeDev } from "../src/edge/edge-dev.js";
import { startEdgeServer } from "../src/edge/node-adapter.js";
import { startServer } from "../src/server/create-server.js";
import { ROOT, makeTemp, median, removeTemp } from "./measure.js";

const CLI = path.join(ROOT, "dist", "cli.js");
const cli = (...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Milliseconds from `since` until `check` holds (polled every 5 ms, at most 120 s). */
async function until(check: () => Promise<boolean>, since: number): Promise<number> {
  for (;;) {
    if (await check().catch(() => false)) return performance.now() - since;
    if (performance.now() - since > 120_000) throw new Error("not reached in 120 s");
    await sleep(5);
  }
}

const status = async (url: string, key: string, target: string) => (await fetch(`${url}${target}`, { headers: { "x-api-key": key } })).status;
const body = async (url: string, target: string) => (await fetch(`${url}${target}`, { headers: { "x-api-key": DEMO_READ_KEY } })).text();

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const dir = makeTemp("cdsnap-edge-latency-");
  const db = path.join(dir, "db.sqlite");
  const content = path.join(dir, "content");
  const out = path.join(dir, "site");
  cpSync(path.join(ROOT, "content"), content, { recursive: true });
  cli("db", "migrate", "--db", db);
  cli("db", "seed-demo", "--db", db);
  cli("build", "--db", db, "--content", content, "--out", out);

  const origin = await startServer({ db, out, port: 0, log: () => undefined });
  const node = await startEdgeServer({ out, port: 0, origin: origin.url });
  const workerd = await startEdgeDev({ db, out, port: 0, origin: origin.url, edgeBundle: path.join(ROOT, "dist", "edge.js") });
  const targets = { serve: origin.url, "edge (Node)": node.url, "edge dev (workerd)": workerd.url } as const;
  const revocation: Record<string, number[]> = {};
  const build: Record<string, number[]> = {};
  const organization = "/api/organizations/demo/organization";
  try {
    for (let round = 0; round < rounds; round++) {
      const created = JSON.parse(cli("keys", "create", "--db", db, "--org", "demo", "--json", "--out", out)) as { key: string; id: string };
      for (const url of Object.values(targets)) await until(async () => (await status(url, created.key, organization)) === 200, performance.now());
      cli("keys", "revoke", created.id, "--db", db, "--out", out);
      const revoked = performance.now();
      await Promise.all(
        Object.entries(targets).map(async ([name, url]) => {
          (revocation[name] ??= []).push(await until(async () => (await status(url, created.key, organization)) === 401, revoked));
        }),
      );

      const post = path.join(content, "demo/2026/notes-from-the-cupping-table.md");
      const title = `Cupping notes, round ${round}`;
      writeFileSync(post, readFileSync(post, "utf8").replace(/^title: .*$/m, `title: ${title}`));
      cli("build", "--db", db, "--content", content, "--out", out);
      const built = performance.now();
      await Promise.all(
        Object.entries(targets).map(async ([name, url]) => {
          (build[name] ??= []).push(await until(async () => (await body(url, "/api/organizations/demo/contents/post-0012")).includes(title), built));
        }),
      );
    }
  } finally {
    await workerd.close();
    await node.close();
    await origin.close(1_000);
    removeTemp(dir);
  }
  const cell = (values: number[]) => `${Math.round(median(values))} ms (max ${Math.round(Math.max(...values))} ms)`;
  const lines = [`| target | revocation reaches it | a build reaches it |`, `| --- | ---: | ---: |`];
  for (const name of Object.keys(targets)) lines.push(`| ${name} | ${cell(revocation[name]!)} | ${cell(build[name]!)} |`);
  process.stdout.write(`${rounds} rounds, median (max):\n\n${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`edge latency failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
