import { Option, type Command } from "commander";
import type { KeyRecord, spellScopes } from "../db/keys.js";
import type { Db } from "../db/open.js";
import { absolute, dbOption } from "./options.js";

/** `--out`: the tree whose edge document (docs/edge.md) a change of keys writes again. */
const edgeOutOption = () =>
  new Option("--out <dir>", "the published tree: write its edge document again, for the edge handler").env("CDSNAP_OUT");

/** Writes the edge document of `out` after a change of keys; a word on stderr says where. */
async function refreshEdgeDocument(db: Db, out: string | undefined): Promise<void> {
  if (out === undefined) return;
  const { writeEdgeDocument } = await import("../edge/publish-document.js");
  const file = writeEdgeDocument(db, absolute(out));
  process.stderr.write(file ? `edge document written: ${file}\n` : `no published tree at ${absolute(out)}: no edge document written\n`);
}

async function withDb<T>(file: string, fn: (db: Db) => T | Promise<T>): Promise<T> {
  const { openContractDatabase } = await import("../db/contract-schema.js");
  const db = openContractDatabase(absolute(file));
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

/** A key's record as `keys` prints it: never its hash, scopes spelled as the database stores them. */
function printable({ keySha256: _hash, ...record }: KeyRecord, spell: typeof spellScopes) {
  return { ...record, scopes: spell(record.scopes) };
}

export function registerKeys(program: Command): void {
  const keys = program.command("keys").description("create, list and revoke API keys (D5)");
  keys
    .command("create")
    .description("create a key and print it once; only its SHA-256 is stored")
    .addOption(dbOption())
    .requiredOption("--org <id>", "organization the key belongs to")
    .option("--scopes <scopes>", "read, read,write, read,preview (reads drafts and scheduled posts from the preview tree) or read,write,preview", "read")
    .option("--label <label>", "a note to recognise the key by")
    .option("--json", "print the key and its record as JSON")
    .addOption(edgeOutOption())
    .action(async (flags: { db: string; org: string; scopes: string; label?: string; json?: boolean; out?: string }) => {
      const { createKey, parseScopes, spellScopes } = await import("../db/keys.js");
      const created = await withDb(flags.db, async (db) => {
        const key = createKey(db, { orgId: flags.org, scopes: parseScopes(flags.scopes), label: flags.label });
        await refreshEdgeDocument(db, flags.out);
        return key;
      });
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ key: created.rawKey, ...printable(created.record, spellScopes) })}\n`);
        return;
      }
      // The key alone on stdout, so `KEY=$(cdsnap keys create …)` captures it; the note is for the person.
      process.stdout.write(`${created.rawKey}\n`);
      process.stderr.write(
        `created key ${created.record.id} for ${created.record.orgId} (${spellScopes(created.record.scopes)}); ` +
          "store it now: it is not shown again\n",
      );
    });
  keys
    .command("list")
    .description("list keys (never the keys themselves)")
    .addOption(dbOption())
    .option("--org <id>", "only this organization's keys")
    .option("--json", "print JSON")
    .action(async (flags: { db: string; org?: string; json?: boolean }) => {
      const { listKeys, spellScopes } = await import("../db/keys.js");
      const records = (await withDb(flags.db, (db) => listKeys(db, flags.org))).map((record) => printable(record, spellScopes));
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(records)}\n`);
        return;
      }
      for (const r of records) {
        const state = r.revokedAt ? `revoked ${r.revokedAt}` : "active";
        process.stdout.write(`${r.id}\t${r.orgId}\t${r.scopes}\t${state}\t${r.label ?? ""}\n`);
      }
    });
  keys
    .command("revoke <id>")
    .description("revoke a key; a running server refuses it within a second (the edge: see docs/edge.md)")
    .addOption(dbOption())
    .addOption(edgeOutOption())
    .action(async (id: string, flags: { db: string; out?: string }) => {
      const { revokeKey } = await import("../db/keys.js");
      const record = await withDb(flags.db, async (db) => {
        const revoked = revokeKey(db, id);
        await refreshEdgeDocument(db, flags.out);
        return revoked;
      });
      process.stdout.write(`revoked ${record.id} (${record.orgId}) at ${record.revokedAt}\n`);
    });
}
