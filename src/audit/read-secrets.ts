/**
 * The ONLY code in cdsnap that selects from `organization_secrets`, and it does
 * so for one purpose: the audit compares these values with the bytes of a tree
 * to prove that none of them leaked. A value is never rendered, written, logged
 * or put in a message; the audit names a leaked secret by organization and name.
 *
 * The value sits in a private field, so `JSON.stringify` and `console.log` of a
 * secret show its organization and name only.
 */
import type { Db } from "../db/open.js";

export class StoredSecret {
  readonly #value: string;

  constructor(
    readonly orgId: string,
    readonly name: string,
    value: string,
  ) {
    this.#value = value;
  }

  /** The secret itself: for comparing with output bytes, nothing else. */
  get value(): string {
    return this.#value;
  }

  toJSON(): { orgId: string; name: string } {
    return { orgId: this.orgId, name: this.name };
  }
}

/** Every stored secret of every organization, in (organization, name) order. */
export function readSecrets(db: Db): StoredSecret[] {
  // Used only to compare: see the comment at the top of this file.
  const rows = db
    .prepare("SELECT org_id, name, value FROM organization_secrets ORDER BY org_id, name")
    .all() as { org_id: string; name: string; value: string }[];
  return rows.map((r) => new StoredSecret(r.org_id, r.name, String(r.value)));
}
