/**
 * The one database watcher of serve, dev and edge dev: another connection's
 * commit is seen, the watching connection's own are not, and a reaction that
 * fails is tried again rather than lost.
 */
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { openDatabase, type Db } from "../../src/db/open.js";
import { watchCommits, type CommitWatch } from "../../src/db/watch-commits.js";
import { makeTempDir, removeDir } from "../fixtures/build-fixture.js";

let dir: string;
let watcher: Db;
let writer: Db;
let watch: CommitWatch | undefined;

beforeEach(async () => {
  dir = await makeTempDir();
  const file = path.join(dir, "site.db");
  writer = openDatabase(file, { create: true });
  writer.pragma("journal_mode = WAL");
  writer.exec("CREATE TABLE t (n INTEGER)");
  watcher = openDatabase(file);
});

afterEach(async () => {
  watch?.stop();
  watcher.close();
  writer.close();
  await removeDir(dir);
});

/** Resolves on the next call of the returned callback. */
function nextCall() {
  let resolve!: () => void;
  let promise = new Promise<void>((r) => (resolve = r));
  return {
    call: () => {
      const done = resolve;
      promise = new Promise<void>((r) => (resolve = r));
      done();
    },
    next: () => promise,
  };
}

it("calls once for another connection's commits, and never for the watching connection's own", async () => {
  const seen = nextCall();
  let calls = 0;
  watch = watchCommits(watcher, 5, () => {
    calls++;
    seen.call();
  }, (error) => {
    throw error;
  });

  // The watching connection's own commit, then another's: the one call is for the other's.
  watcher.exec("INSERT INTO t VALUES (1)");
  const first = seen.next();
  writer.exec("INSERT INTO t VALUES (2)");
  await first;
  expect(calls).toBe(1);
  expect(watcher.prepare("SELECT count(*) FROM t").pluck().get()).toBe(2);

  // Commits made between two looks may be told as one call, never as none.
  const second = seen.next();
  writer.exec("INSERT INTO t VALUES (3)");
  writer.exec("INSERT INTO t VALUES (4)");
  await second;
  expect(calls).toBeGreaterThanOrEqual(2);
  expect(calls).toBeLessThanOrEqual(3);
});

it("a reaction that throws is told to onError and called again at the next look", async () => {
  const errors: unknown[] = [];
  const seen = nextCall();
  let calls = 0;
  watch = watchCommits(watcher, 5, () => {
    calls++;
    if (calls === 1) throw new Error("keys unreadable");
    seen.call();
  }, (error) => errors.push(error));
  const retried = seen.next();
  writer.exec("INSERT INTO t VALUES (1)");
  await retried;
  expect(calls).toBe(2);
  expect(errors.map((e) => (e as Error).message)).toEqual(["keys unreadable"]);
});
