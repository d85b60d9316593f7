/**
 * A real cdsnap origin for the client tests: a temporary folder with a migrated,
 * demo-seeded SQLite file, a real build of the repository's demo content, and
 * the real server on 127.0.0.1 port 0. Nothing is mocked between the client and
 * the bytes on disk.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "../../src/build.js";
import { seedDemo } from "../../src/db/demo-seed.js";
import { migrate } from "../../src/db/migrations.js";
import { openDatabase } from "../../src/db/open.js";
import { startServer, type RunningServer } from "../../src/server/create-server.js";

export { DEMO_ORG_ID, DEMO_READ_KEY, DEMO_WRITE_KEY, HARBOR_ORG_ID, HARBOR_READ_KEY } from "../../src/db/demo-seed.js";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** A fixed build instant, so the published set (D1) does not depend on the day the tests run. */
const BUILD_NOW = new Date("2026-07-01T00:00:00Z");

export interface LiveServer {
  url: string;
  running: RunningServer;
  /** Closes the server and removes the temporary folder. */
  stop(): Promise<void>;
}

export async function startLiveServer(): Promise<LiveServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-client-"));
  const db = path.join(dir, "db.sqlite");
  const out = path.join(dir, "site");
  const handle = openDatabase(db, { create: true });
  try {
    migrate(handle);
    seedDemo(handle, new Date("2026-01-01T00:00:00Z"));
  } finally {
    handle.close();
  }
  await build({ db, content: path.join(REPO_ROOT, "content"), out, now: BUILD_NOW });
  const running = await startServer({ db, out, host: "127.0.0.1", port: 0, log: () => {} });
  return {
    url: running.url,
    running,
    async stop() {
      await running.close(1_000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The raw JSON body of a GET, fetched without the client: what the client must hand back unchanged. */
export async function rawGet(url: string, apiPath: string, key: string): Promise<unknown> {
  const res = await fetch(url + apiPath, { headers: { "x-api-key": key } });
  if (res.status !== 200) throw new Error(`GET ${apiPath} answered ${res.status}`);
  return res.json();
}
