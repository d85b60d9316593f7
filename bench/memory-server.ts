/**
 * The yardstick for `cdsnap serve`: `node dist/bench/memory-server.js <routes.json>`
 * reads the same tree files once into memory and answers each path with those
 * bytes and the headers cdsnap sent for it. No key check, no routing beyond
 * one Map lookup: the fastest a node:http origin can answer these requests.
 * Prints `listening <port>` once ready.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface MemoryRoute {
  path: string;
  file: string;
  headers: Record<string, string>;
}

const [routesFile] = process.argv.slice(2);
if (!routesFile) throw new Error("usage: node dist/bench/memory-server.js <routes.json>");
const routes = JSON.parse(readFileSync(routesFile, "utf8")) as MemoryRoute[];
const answers = new Map(
  routes.map((r) => {
    const body = readFileSync(r.file);
    return [r.path, { body, headers: { ...r.headers, "content-length": String(body.length) } }] as const;
  }),
);

const server = createServer((req, res) => {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const answer = answers.get(q === -1 ? url : url.slice(0, q));
  if (!answer) {
    res.writeHead(404, { "content-type": "application/json; charset=utf-8" });
    res.end('{"error":{"code":"not_found","message":"Not found"}}');
    return;
  }
  res.writeHead(200, answer.headers);
  res.end(answer.body);
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
