import { createHash } from "node:crypto";
import { canonicalJson } from "../render/canonical-json.js";

export function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The bytes of a tree file: canonical JSON, so equal data is equal bytes. */
export function fileBytes(json: unknown): Buffer {
  return Buffer.from(canonicalJson(json), "utf8");
}

/** The bytes of a rendered file, serialized now or already. */
export function renderedBytes(file: { json: unknown } | { canonical: string }): Buffer {
  return "canonical" in file ? Buffer.from(file.canonical, "utf8") : fileBytes(file.json);
}
