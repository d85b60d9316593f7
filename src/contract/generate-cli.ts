/** `npm run schemas`: rewrites schemas/ from the zod models and the demo. */
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { generateContractFiles } from "./generate.js";

const root = process.cwd();
const dir = path.join(root, "schemas");
const files = await generateContractFiles(path.join(root, "content"));
await mkdir(dir, { recursive: true });
for (const name of await readdir(dir)) if (!files.has(name)) await rm(path.join(dir, name));
for (const [name, text] of files) await writeFile(path.join(dir, name), text);
process.stdout.write(`wrote ${files.size} files to schemas/\n`);
