/**
 * Looks for stored secrets in the bytes of tree files and in their paths. Each
 * secret is searched for as written and in its JSON-escaped form (a value
 * holding `"` or `\` appears escaped once it has passed through JSON.stringify,
 * which is how every tree file is written).
 */
import type { Problem } from "../errors.js";
import { codePointLength } from "../model/rules.js";
import type { StoredSecret } from "./read-secrets.js";

/** Shorter values match too much ordinary text to be worth a failed build. */
export const MIN_SECRET_LENGTH = 6;

export interface SecretNeedle {
  orgId: string;
  name: string;
  form: "as stored" | "JSON-escaped";
  bytes: Buffer;
}

export interface Needles {
  needles: SecretNeedle[];
  warnings: Problem[];
}

export function needlesOf(secrets: readonly StoredSecret[]): Needles {
  const needles: SecretNeedle[] = [];
  const warnings: Problem[] = [];
  for (const secret of secrets) {
    const { orgId, name, value } = secret;
    if (codePointLength(value) < MIN_SECRET_LENGTH) {
      warnings.push({
        where: `organization_secrets[org_id=${orgId} name=${name}]`,
        message:
          `the value is shorter than ${MIN_SECRET_LENGTH} characters and was not searched for ` +
          "(it would match ordinary text); use a longer secret",
      });
      continue;
    }
    needles.push({ orgId, name, form: "as stored", bytes: Buffer.from(value, "utf8") });
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) needles.push({ orgId, name, form: "JSON-escaped", bytes: Buffer.from(escaped, "utf8") });
  }
  return { needles, warnings };
}

/**
 * The problems of one file whose bytes (or path) hold a secret. The message
 * names the secret, never its value: the report itself must not leak it.
 */
export function scanForSecrets(where: string, bytes: Buffer, needles: readonly SecretNeedle[], inPath = false): Problem[] {
  const found = new Map<string, { orgId: string; name: string; forms: string[] }>();
  for (const n of needles) {
    if (bytes.indexOf(n.bytes) === -1) continue;
    const key = `${n.orgId}\0${n.name}`;
    const entry = found.get(key) ?? { orgId: n.orgId, name: n.name, forms: [] };
    entry.forms.push(n.form);
    found.set(key, entry);
  }
  return [...found.values()].map((f) => ({
    where,
    message:
      `${inPath ? "its path holds" : "holds"} the value of secret "${f.name}" of organization ${f.orgId} ` +
      `(${f.forms.join(" and ")}); a secret must never be published: remove it from the source that produced ` +
      "this file, rebuild, and rotate the secret",
  }));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A report names files by their paths and quotes ids and slugs: when one of
 * them is a secret's value, printing the report would leak what the audit
 * refused. Every string in `value` (keys too) comes back with each secret's
 * value, in either form, replaced by `<secret NAME of ORG>`.
 */
export function redactSecrets<T>(value: T, needles: readonly SecretNeedle[]): T {
  if (needles.length === 0) return value;
  const names = new Map(needles.map((n) => [n.bytes.toString("utf8"), `<secret ${n.name} of ${n.orgId}>`]));
  // Longest first, so a secret holding another one is replaced whole.
  const pattern = new RegExp([...names.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|"), "g");
  const redact = (v: unknown): unknown => {
    if (typeof v === "string") return v.replace(pattern, (found) => names.get(found)!);
    if (Array.isArray(v)) return v.map(redact);
    if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, m]) => [redact(k), redact(m)]));
    return v;
  };
  return redact(value) as T;
}
