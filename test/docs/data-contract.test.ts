/**
 * docs/data-contract.md against the code: the CREATE TABLE statements it shows
 * are the ones `db migrate` runs, and its tables of columns name every column
 * of the contract, and no other, so the page cannot drift from the schema.
 */
import Database from "better-sqlite3";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONTRACT_TABLES_SQL } from "../../src/db/contract-schema.js";
import { migrate } from "../../src/db/migrations.js";
import { REPO_ROOT } from "../fixtures/repo.js";

const PAGE = readFileSync(path.join(REPO_ROOT, "docs/data-contract.md"), "utf8");

/** The ```sql blocks of the page, in order. */
function sqlBlocks(): string[] {
  return [...PAGE.matchAll(/^```sql\n([\s\S]*?)^```$/gm)].map((match) => match[1]!.trim());
}

/** Per `### \`table\`` section, the first column of its `| column |` table. */
function documentedColumns(): Map<string, string[]> {
  const byTable = new Map<string, string[]>();
  for (const section of PAGE.split(/^### /m).slice(1)) {
    const table = /^`(\w+)`\n/.exec(section)?.[1];
    if (!table) continue;
    const lines = section.split("\n");
    const header = lines.findIndex((line) => line.startsWith("| column |"));
    const columns: string[] = [];
    for (const line of lines.slice(header + 2)) {
      const row = /^\| `(\w+)` \|/.exec(line);
      if (!row) break;
      columns.push(row[1]!);
    }
    byTable.set(table, columns);
  }
  return byTable;
}

function schemaOf(db: Database.Database): unknown[] {
  return db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name").all();
}

describe("docs/data-contract.md", () => {
  it("shows the contract's CREATE TABLE statements exactly as db migrate runs them", () => {
    expect(sqlBlocks()[0]).toBe(CONTRACT_TABLES_SQL.trim());
  });

  it("shows the whole schema db migrate makes in a new file, cdsnap's additions included", () => {
    const fromPage = new Database(":memory:");
    const migrated = new Database(":memory:");
    try {
      const [tables, additions] = sqlBlocks();
      fromPage.exec(tables!);
      fromPage.exec(additions!);
      migrate(migrated);
      expect(schemaOf(fromPage)).toEqual(schemaOf(migrated));
      expect(migrated.prepare("SELECT name FROM cdsnap_schema").pluck().all()).toEqual(["api_keys_org"]);
    } finally {
      fromPage.close();
      migrated.close();
    }
  });

  it("describes every column of every contract table, and no other", () => {
    const scratch = new Database(":memory:");
    try {
      scratch.exec(CONTRACT_TABLES_SQL);
      const tables = scratch.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY rowid").pluck().all() as string[];
      const documented = documentedColumns();
      for (const table of tables) {
        const columns = scratch.prepare("SELECT name FROM pragma_table_info(?)").pluck().all(table);
        expect(documented.get(table), `the section of ${table}`).toEqual(columns);
      }
    } finally {
      scratch.close();
    }
  });
});
