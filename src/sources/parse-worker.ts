/**
 * A worker of the pool (parse-pool.ts): parses or hashes each batch of files
 * it is sent, answering in the order asked. The parser (YAML readers, the
 * markdown lexer) loads with the first batch to parse: a worker that only
 * hashes never waits for it.
 */
import { parentPort } from "node:worker_threads";
import { CLAIMED_BY_WORKER, UNCLAIMED, type PoolTask } from "./parse-pool.js";
import { readIdentities } from "./read-text.js";
import { spoolFormOf } from "../model/snapshot.js";

let answered: Promise<unknown> = Promise.resolve();

async function answer(task: PoolTask): Promise<unknown> {
  if (task.kind === "hash") {
    const { claim } = task;
    // Taken back by the thread that sent it, which hashed it itself.
    if (claim && Atomics.compareExchange(claim.slots, claim.slot, UNCLAIMED, CLAIMED_BY_WORKER) !== UNCLAIMED) return null;
    return readIdentities(task.realRoot, task.contentDir, task.rels);
  }
  const { parseFiles } = await import("./parse-files.js");
  if (task.form !== "spooled") return parseFiles(task.contentDir, task.realRoot, task.rels);
  return parseFiles(task.contentDir, task.realRoot, task.rels, (record) => {
    if (task.bodies === false) delete record.body;
    return spoolFormOf(record);
  });
}

parentPort?.on("message", (task: PoolTask) => {
  answered = answered.then(async () => parentPort?.postMessage(await answer(task)));
});
