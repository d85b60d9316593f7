/** A render worker (see render-pool.ts): renders, writes and inspects each batch of posts it is sent. */
import path from "node:path";
import { parentPort } from "node:worker_threads";
import { createInspector } from "../audit/inspector.js";
import { recordFromJson } from "../model/snapshot.js";
import { loadBody } from "../sources/read-posts.js";
import type { FileOutcome, RenderAnswer, RenderJobInput, RenderSetup, RenderTask } from "./render-pool.js";
import { createFile, linkInto, postFileBytes } from "./tree-files.js";

let setup: RenderSetup | null = null;
let inspect: ReturnType<typeof createInspector> = () => ({ problems: [] });

function render(job: RenderJobInput): FileOutcome[] {
  const { tree, contentDir, linkFrom, replace } = setup!;
  const live = new Map(job.live);
  const post = recordFromJson(job.record, job.beside);
  const body = post.body ?? loadBody(contentDir, post);
  return postFileBytes(job.orgId, post, body, new Map(job.categories), job.status).map(({ rel, bytes, sha256 }): FileOutcome => {
    if (live.get(rel) === sha256) {
      if (linkFrom !== null) linkInto(tree, path.join(linkFrom, rel), rel, false);
      return { rel, kept: true };
    }
    const [ino, mtimeMs, size] = createFile(tree, rel, bytes, replace);
    return { rel, kept: false, sha256, ino, mtimeMs, size, bytes: bytes.length, inspected: inspect(rel, bytes) };
  });
}

parentPort?.on("message", (task: RenderTask) => {
  if ("setup" in task) {
    setup = task.setup;
    inspect = createInspector(new Set(task.setup.orgIds), task.setup.needles, task.setup.publication);
    return;
  }
  let answer: RenderAnswer;
  try {
    answer = { files: task.jobs.map(render) };
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    answer = { error: { message: e.message, code: e.code, path: e.path } };
  }
  parentPort?.postMessage(answer);
});
