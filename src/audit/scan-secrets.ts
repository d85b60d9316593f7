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
  for (const n of finderOf(needles)(bytes)) {
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

/** Below this many needles, the native search once per needle is faster than one pass for all. */
const ONE_PASS_FROM = 8;

type Finder = (bytes: Buffer) => readonly SecretNeedle[];
const finders = new WeakMap<readonly SecretNeedle[], Finder>();

/**
 * The needles a buffer holds, in their order. With many (every organization's
 * secrets, searched in every file of a tree) they are found in one pass over
 * the bytes, whatever their number: a table of the needles' first four bytes
 * (each needle has at least six) turns almost every position away with one
 * read, and only a position whose four bytes begin a needle is compared in full.
 * Searching once per needle made a 500-organization build spend three
 * quarters of its time here.
 */
function finderOf(needles: readonly SecretNeedle[]): Finder {
  let finder = finders.get(needles);
  if (finder) return finder;
  if (needles.length < ONE_PASS_FROM || needles.some((n) => n.bytes.length < 4)) {
    finder = (bytes) => needles.filter((n) => bytes.indexOf(n.bytes) !== -1);
  } else {
    const byPrefix = new Map<number, SecretNeedle[]>();
    const seen = new Uint8Array(1 << 16);
    for (const n of needles) {
      const key = prefixAt(n.bytes, 0);
      const list = byPrefix.get(key);
      if (list) list.push(n);
      else byPrefix.set(key, [n]);
      seen[slotOf(key)] = 1;
    }
    finder = (bytes) => {
      const found = new Set<SecretNeedle>();
      const last = bytes.length - 4;
      let key = last < 0 ? 0 : prefixAt(bytes, 0);
      for (let i = 0; i <= last; i++) {
        if (i > 0) key = ((key << 8) | bytes[i + 3]!) >>> 0;
        if (seen[slotOf(key)] === 0) continue;
        for (const n of byPrefix.get(key) ?? []) if (!found.has(n) && startsAt(bytes, i, n.bytes)) found.add(n);
      }
      return needles.filter((n) => found.has(n));
    };
  }
  finders.set(needles, finder);
  return finder;
}

const prefixAt = (bytes: Uint8Array, i: number) => ((bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!) >>> 0;
const slotOf = (key: number) => (key ^ (key >>> 16)) & 0xffff;

function startsAt(bytes: Uint8Array, at: number, needle: Uint8Array): boolean {
  if (at + needle.length > bytes.length) return false;
  for (let j = 4; j < needle.length; j++) if (bytes[at + j] !== needle[j]) return false;
  return true;
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
