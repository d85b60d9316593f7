/**
 * Build records (the manifest, the audit record) as JSON Lines: one JSON text
 * per line, written and read a bounded chunk at a time. At 100k posts these
 * records are hundreds of megabytes; as one JSON document they had to exist
 * whole as a string (and a parsed copy) at once.
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";

const CHUNK = 1 << 20;

/** Writes each value as one line; JSON.stringify escapes line breaks, so a value never spans two. */
export async function writeJsonLines(file: string, values: Iterable<unknown>): Promise<void> {
  const handle = await open(file, "w");
  try {
    let pending: string[] = [];
    let size = 0;
    for (const value of values) {
      const line = `${JSON.stringify(value)}\n`;
      pending.push(line);
      size += line.length;
      if (size >= CHUNK) {
        await handle.write(pending.join(""));
        pending = [];
        size = 0;
      }
    }
    if (pending.length > 0) await handle.write(pending.join(""));
  } finally {
    await handle.close();
  }
}

/** The values of a file written by {@link writeJsonLines}, one at a time. */
export async function* readJsonLines(file: string): AsyncGenerator<unknown> {
  const lines = createInterface({ input: createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity });
  for await (const line of lines) if (line !== "") yield JSON.parse(line);
}

/**
 * Reads a record file whose first line is a header naming its format version:
 * each later value goes to `onLine`. Null (and nothing read past the header)
 * when the file is missing, damaged or of another version: the caller then
 * starts afresh rather than trusting it.
 */
export async function readVersioned<H extends { version: number }>(
  file: string,
  version: number,
  onLine: (value: unknown) => void,
): Promise<H | null> {
  try {
    let header: H | null = null;
    for await (const value of readJsonLines(file)) {
      if (header) onLine(value);
      else if ((value as H).version === version) header = value as H;
      else return null;
    }
    return header;
  } catch {
    return null;
  }
}
