/**
 * The secret scan finds a stored secret wherever it lies in a file's bytes,
 * however many secrets there are: with many (every organization's, searched
 * in every file) it makes one pass over the bytes, and must say exactly what
 * searching for each secret on its own says.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { needlesOf, scanForSecrets } from "../../src/audit/scan-secrets.js";
import { StoredSecret } from "../../src/audit/read-secrets.js";

/** What the scan must report: each secret found on its own, by a plain search. */
function expected(bytes: Buffer, secrets: readonly StoredSecret[]): string[] {
  return needlesOf(secrets)
    .needles.filter((n) => bytes.includes(n.bytes))
    .map((n) => `${n.orgId}/${n.name}`);
}

const reported = (bytes: Buffer, secrets: readonly StoredSecret[]) => {
  const { needles } = needlesOf(secrets);
  return scanForSecrets("f.json", bytes, needles).map((p) => {
    const [, name, orgId] = /secret "([^"]+)" of organization (\S+)/.exec(p.message)!;
    return `${orgId}/${name}`;
  });
};

// Secrets alike at the start (a shared prefix), with quotes and non-ASCII, of every length from the minimum.
const secretValue = fc
  .tuple(fc.constantFrom("sk_live_", "sk_l", "pass", "é\"\\x", ""), fc.string({ unit: fc.constantFrom("a", "b", "k", "_", "\"", "é", "9"), minLength: 6, maxLength: 14 }))
  .map(([prefix, rest]) => prefix + rest);

describe("the secret scan", () => {
  test("with many secrets, finds exactly the secrets a search for each one finds", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(secretValue, { minLength: 1, maxLength: 40 }),
        fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.nat()), { maxLength: 30 }),
        (values, pieces) => {
          const secrets = values.map((value, i) => new StoredSecret(`org-${i % 3}`, `s${i}`, value));
          // A file made of text and some of the secrets, as stored or cut short, JSON-escaped or not.
          const text = pieces
            .map((p) => {
              if (typeof p === "string") return p;
              const value = values[p % values.length]!;
              return p % 3 === 0 ? value : p % 3 === 1 ? JSON.stringify(value) : value.slice(0, -1);
            })
            .join("");
          const bytes = Buffer.from(text, "utf8");
          expect(reported(bytes, secrets).sort()).toEqual([...new Set(expected(bytes, secrets))].sort());
        },
      ),
      { numRuns: 400 },
    );
  });

  test("a secret at the very start or end of a file, or the whole file, is found", () => {
    const secrets = Array.from({ length: 12 }, (_, i) => new StoredSecret("acme", `key${i}`, `sk_live_${i}abcdef`));
    for (const text of ["sk_live_3abcdef", "sk_live_3abcdef tail", "head sk_live_11abcdef", "sk_live_1abcde"]) {
      const bytes = Buffer.from(text);
      expect(reported(bytes, secrets)).toEqual(expected(bytes, secrets));
    }
    expect(reported(Buffer.from("sk_live_3abcdef"), secrets)).toEqual(["acme/key3"]);
    expect(reported(Buffer.from("sk_l"), secrets)).toEqual([]);
  });
});
