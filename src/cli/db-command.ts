import type { Command } from "commander";
import type { MigrateResult } from "../db/migrations.js";
import { absolute, dbOption } from "./options.js";

export function registerDb(program: Command): void {
  const db = program.command("db").description("create and migrate the database");
  db.command("migrate")
    .description(
      "create the database, or adopt an existing one: add only the missing contract tables and cdsnap's own indexes, change no row",
    )
    .addOption(dbOption())
    .action(async (flags: { db: string }) => {
      const { openDatabase } = await import("../db/open.js");
      const { migrate } = await import("../db/migrations.js");
      const handle = openDatabase(absolute(flags.db), { create: true });
      try {
        process.stdout.write(describeMigration(flags.db, migrate(handle)));
      } finally {
        handle.close();
      }
    });
  db.command("seed-demo")
    .description("insert the demo organizations (only into a database that has none of them)")
    .addOption(dbOption())
    .action(async (flags: { db: string }) => {
      const { openDatabase } = await import("../db/open.js");
      const { migrate } = await import("../db/migrations.js");
      const { seedDemo } = await import("../db/demo-seed.js");
      const handle = openDatabase(absolute(flags.db), { create: true });
      try {
        migrate(handle);
        process.stdout.write(seedDemo(handle) ? "seeded the demo organizations\n" : "demo organizations already present\n");
      } finally {
        handle.close();
      }
    });
}

function describeMigration(file: string, result: MigrateResult): string {
  const done = [
    ...(result.tablesCreated.length > 0 ? [`created the tables ${result.tablesCreated.join(", ")}`] : []),
    ...(result.additionsApplied.length > 0 ? [`added ${result.additionsApplied.join(", ")}`] : []),
  ];
  return done.length > 0 ? `${file}: ${done.join("; ")}\n` : `${file} already has everything cdsnap needs; nothing changed\n`;
}
