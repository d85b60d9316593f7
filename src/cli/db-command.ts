import type { Command } from "commander";
import { seedDemo } from "../db/demo-seed.js";
import { migrate } from "../db/migrations.js";
import { openDatabase } from "../db/open.js";
import { absolute, dbOption } from "./options.js";

export function registerDb(program: Command): void {
  const db = program.command("db").description("create and migrate the database");
  db.command("migrate")
    .description("create the database if needed and apply pending migrations")
    .addOption(dbOption())
    .action((flags: { db: string }) => {
      const handle = openDatabase(absolute(flags.db), { create: true });
      try {
        const ran = migrate(handle);
        process.stdout.write(ran ? `applied ${ran} migration(s) to ${flags.db}\n` : `${flags.db} is up to date\n`);
      } finally {
        handle.close();
      }
    });
  db.command("seed-demo")
    .description("insert the demo organizations (only into a database that has none of them)")
    .addOption(dbOption())
    .action((flags: { db: string }) => {
      const handle = openDatabase(absolute(flags.db), { create: true });
      try {
        migrate(handle);
        process.stdout.write(seedDemo(handle) ? "seeded the demo organizations\n" : "demo organizations already present\n");
      } finally {
        handle.close();
      }
    });
}
