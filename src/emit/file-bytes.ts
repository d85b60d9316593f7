import { hash } from "node:crypto";
import { canonicalJson } from "../render/canonical-json.js";

/**
 * Hex SHA-256 of a string's UTF-8 bytes, or of bytes. The one-shot
 * crypto.hash, not createHash: no Hash object per call, and a build hashes
 * every file it writes and the audit every list item it reads.
 */
export function sha256(data: string | Buffer): string {
  return hash("sha256", data, "hex");
}

/** The bytes of a tree file: canonical JSON, so equal data is equal bytes. */
export function fileBytes(json: unknown): Buffer {
  return Buffer.from(canonicalJson(json), "utf8");
}

/** The bytes of a rendered file, serialized now or already. */
export function renderedBytes(file: { json: unknown } | { bytes: () => Buffer }): Buffer {
  return "bytes" in file ? file.bytes() : fileBytes(file.json);
}

/**
 * Serializes and hashes JSON once per object: a block's or a post's file by
 * id and by slug are the same object, so they become one buffer (which the
 * audit's inspector then inspects once) with one hash.
 */
export function serializedOnce(): (json: unknown) => { bytes: Buffer; sha256: string } {
  const done = new Map<unknown, { bytes: Buffer; sha256: string }>();
  return (json) => {
    let known = done.get(json);
    if (!known) {
      const bytes = fileBytes(json);
      done.set(json, (known = { bytes, sha256: sha256(bytes) }));
    }
    return known;
  };
}
