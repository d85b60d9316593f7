import type { Command } from "commander";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { mkdirSync } from "node:fs";
import { formatReport } from "../report.js";
import { listenRefusal } from "./listen-error.js";
import { portOption } from "./options.js";
import { untilStopped } from "./until-stopped.js";

interface DemoFlags {
  dir: string;
  content?: string;
  port: number;
}

/** `npm start`: migrate, seed when empty, build and serve the demo organization. */
/** The demo posts ship beside dist/, so `npx cdsnap demo` works in any project, not only in a clone. */
const DEMO_CONTENT = fileURLToPath(new URL("../content", import.meta.url));

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("build the demo organizations from the posts cdsnap ships and serve them, printing working curl lines")
    .option("--dir <dir>", "where the demo database and tree go", ".demo")
    .option("--content <dir>", "the demo posts (default: the ones cdsnap ships)")
    .addOption(portOption())
    .action(async (flags: DemoFlags) => {
      const { openDatabase } = await import("../db/open.js");
      const { migrate } = await import("../db/migrations.js");
      const { DEMO_ORG_ID, DEMO_READ_KEY, DEMO_WRITE_KEY, seedDemo } = await import("../db/demo-seed.js");
      const { build } = await import("../build.js");
      const { startServer } = await import("../server/create-server.js");
      const dir = path.resolve(flags.dir);
      mkdirSync(dir, { recursive: true });
      const dbFile = path.join(dir, "cdsnap.db");
      const db = openDatabase(dbFile, { create: true });
      try {
        migrate(db);
        if (seedDemo(db)) process.stdout.write(`seeded the demo organizations into ${dbFile}\n`);
      } finally {
        db.close();
      }
      const out = path.join(dir, "site");
      const report = await build({ db: dbFile, content: path.resolve(flags.content ?? DEMO_CONTENT), out });
      process.stdout.write(`${formatReport(report)}\n`);

      const running = await startServer({ db: dbFile, out, port: flags.port }).catch((error: unknown) => {
        // `npm start` passes no flags: the variable is the way to another port there.
        throw listenRefusal(error, { port: "CDSNAP_PORT (e.g. CDSNAP_PORT=8788 npm start) or --port <n>" });
      });
      const base = `${running.url}/api/organizations/${DEMO_ORG_ID}`;
      process.stdout.write(
        [
          "",
          `cdsnap serving ${running.url} (demo keys are public and for this demo only)`,
          "try:",
          `  curl -H 'x-api-key: ${DEMO_READ_KEY}' ${base}/contents`,
          `  curl -H 'x-api-key: ${DEMO_READ_KEY}' '${base}/blocks?pages=home'`,
          `  curl -X PATCH -H 'x-api-key: ${DEMO_WRITE_KEY}' -H 'content-type: application/json' \\`,
          `       -d '{"businessDescription":"Roasted on the waterfront."}' ${base}/business-description`,
          "Ctrl-C stops it.",
          "",
        ].join("\n"),
      );
      await untilStopped(() => running.close());
    });
}
