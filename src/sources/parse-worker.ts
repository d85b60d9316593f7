/** A parse worker (see parse-pool.ts): parses each batch of files it is sent. */
import { parentPort } from "node:worker_threads";
import type { ParseTask } from "./parse-pool.js";
import { parseFiles } from "./parse-files.js";

parentPort?.on("message", (task: ParseTask) => {
  parentPort?.postMessage(parseFiles(task.contentDir, task.realRoot, task.rels));
});
