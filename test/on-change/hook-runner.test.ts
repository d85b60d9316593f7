/**
 * The on-change runner with real shell commands: what the command reads on
 * stdin, how changes that come during a run are merged, how a hung command is
 * killed with everything it started, and what a run's report says.
 */
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { changeEventSchema } from "../../src/model/change-event.js";
import { accessChange, buildChange, patchChange } from "../../src/on-change/change-set.js";
import { createChangeHook, describeHookRun, hookLogLine, type HookRun } from "../../src/on-change/hook-runner.js";
import { fixturesRemovedAfterEach, makeTempDir } from "../fixtures/build-fixture.js";
import { makeGate, openGate, recordedRuns, recordingHook, shellQuote, untilRecorded } from "../fixtures/hook.js";
import { REPO_ROOT } from "../fixtures/repo.js";
import { pollUntil } from "../fixtures/wait.js";

const { removeAfterEach } = fixturesRemovedAfterEach();

async function tempDir(): Promise<string> {
  const dir = await makeTempDir("cdsnap-hook-");
  removeAfterEach(dir);
  return dir;
}

const FIXED_NOW = () => new Date("2026-05-04T03:02:01.000Z");

/** A runner whose reports are collected. */
function runner(command: string, options: { timeoutMs?: number; killGraceMs?: number } = {}) {
  const runs: HookRun[] = [];
  const hook = createChangeHook({ command, onRun: (run) => runs.push(run), now: FIXED_NOW, ...options });
  return { hook, runs };
}

/** Whether a process is alive: a zombie (exited, not yet reaped) is not. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!existsSync("/proc/self/stat")) return true;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("what the on-change command reads on stdin", () => {
  it("one JSON object, ended by a newline: event, time, merged, orgs, paths and tags, sorted", async () => {
    const dir = await tempDir();
    const stdin = path.join(dir, "stdin");
    const { hook, runs } = runner(`cat > ${shellQuote(stdin)}`);
    hook.notify(
      buildChange(
        {
          added: ["/api/organizations/demo/contents/by-slug/new", "/api/organizations/demo/contents/post-9"],
          changed: ["/api/organizations/demo/contents"],
          removed: ["/api/organizations/acme/blocks/blk-1"],
        },
        ["contents:demo", "content:demo/post-9", "block:acme/blk-1"],
      ),
    );
    await hook.close();
    const text = readFileSync(stdin, "utf8");
    expect(text.endsWith("}\n")).toBe(true);
    expect(text.indexOf("\n")).toBe(text.length - 1);
    expect(JSON.parse(text)).toEqual({
      event: "build",
      time: "2026-05-04T03:02:01.000Z",
      merged: 1,
      orgs: ["acme", "demo"],
      paths: [
        "/api/organizations/acme/blocks/blk-1",
        "/api/organizations/demo/contents",
        "/api/organizations/demo/contents/by-slug/new",
        "/api/organizations/demo/contents/post-9",
      ],
      tags: ["block:acme/blk-1", "content:demo/post-9", "contents:demo"],
    });
    expect(runs.map((r) => r.status)).toEqual(["ok"]);
  });

  it("every kind of event is valid by the zod model and by schemas/ChangeEvent.schema.json", async () => {
    const dir = await tempDir();
    const { hook } = runner(recordingHook(dir).command);
    hook.notify(patchChange(["demo", "acme"]));
    hook.notify(accessChange(["demo"]));
    hook.notify(buildChange({ added: [], changed: ["/api/organizations/demo/organization"], removed: [] }, ["organization:demo"]));
    await hook.close();
    const events = recordedRuns(path.join(dir, "runs.jsonl"));
    expect(events.map((e) => e.event)).toEqual(["patch", "access", "build"]);
    const ajv = new Ajv2020.default({ strict: true, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(path.join(REPO_ROOT, "schemas/ChangeEvent.schema.json"), "utf8")));
    for (const event of events) {
      expect(changeEventSchema.safeParse(event).error).toBeUndefined();
      expect(validate(event), ajv.errorsText(validate.errors)).toBe(true);
    }
    expect(events[0]).toMatchObject({
      orgs: ["acme", "demo"],
      paths: ["/api/organizations/acme/organization", "/api/organizations/demo/organization"],
      tags: ["organization:acme", "organization:demo"],
    });
    expect(events[1]).toMatchObject({ paths: [], tags: ["org:demo"], orgs: ["demo"] });
  });

  it("a change that makes nothing stale runs nothing", async () => {
    const dir = await tempDir();
    const { hook, runs } = runner(recordingHook(dir).command);
    hook.notify(buildChange({ added: [], changed: [], removed: [] }, []));
    await hook.close();
    expect(runs).toEqual([]);
  });
});

describe("one run at a time", () => {
  it("changes that come during a run are merged into one more run per kind of event, in order of arrival", async () => {
    const dir = await tempDir();
    const gate = makeGate(path.join(dir, "gate"));
    // Only the first run waits at the gate: the others find it open for good.
    const { command, runs: recorded } = recordingHook(dir);
    const once = `${command.replace(/; exit 0$/, "")}; [ -e ${shellQuote(`${gate}.passed`)} ] || { cat ${shellQuote(gate)} > /dev/null; touch ${shellQuote(`${gate}.passed`)}; }`;
    const { hook, runs } = runner(once);
    hook.notify(patchChange(["a"]));
    await untilRecorded(recorded, 1);
    hook.notify(patchChange(["b"]));
    hook.notify(buildChange({ added: ["/api/organizations/c/contents/p1"], changed: [], removed: [] }, ["content:c/p1"]));
    hook.notify(patchChange(["c"]));
    hook.notify(patchChange(["b"]));
    // The first run is still waiting at the gate: nothing else has run.
    expect(recordedRuns(recorded)).toHaveLength(1);
    await openGate(gate);
    await hook.close();
    const events = recordedRuns(recorded);
    expect(events.map((e) => [e.event, e.merged, e.orgs])).toEqual([
      ["patch", 1, ["a"]],
      ["patch", 3, ["b", "c"]],
      ["build", 1, ["c"]],
    ]);
    expect(events[1]!.paths).toEqual(["/api/organizations/b/organization", "/api/organizations/c/organization"]);
    expect(runs.map((r) => [r.event, r.status, r.merged])).toEqual([
      ["patch", "ok", 1],
      ["patch", "ok", 3],
      ["build", "ok", 1],
    ]);
  });

  it("notify returns before the command starts; close waits for every recorded change, and ignores later ones", async () => {
    const dir = await tempDir();
    const { command, runs: recorded } = recordingHook(dir);
    const { hook } = runner(command);
    hook.notify(patchChange(["a"]));
    expect(recordedRuns(recorded)).toEqual([]);
    const closed = hook.close();
    hook.notify(patchChange(["late"]));
    await closed;
    expect(recordedRuns(recorded).map((e) => e.orgs)).toEqual([["a"]]);
  });
});

describe("a command that fails or hangs", () => {
  it("a failure is reported with its exit code and the end of its stderr; the next change still runs", async () => {
    const dir = await tempDir();
    const { command, runs: recorded } = recordingHook(dir, { exit: 7, stderr: "purge refused: 403" });
    const { hook, runs } = runner(command);
    hook.notify(patchChange(["a"]));
    await untilRecorded(recorded, 1);
    await pollUntil(async () => runs.length === 1, 10_000);
    hook.notify(patchChange(["b"]));
    await hook.close();
    expect(runs.map((r) => [r.status, r.exitCode, r.stderr.trim()])).toEqual([
      ["failed", 7, "purge refused: 403"],
      ["failed", 7, "purge refused: 403"],
    ]);
    expect(hookLogLine(runs[0]!)).toMatchObject({ level: "error", msg: "on-change", event: "patch", status: "failed", exitCode: 7 });
    expect(describeHookRun(runs[0]!)).toMatch(/^on-change \(patch: 1 paths, 1 tags\) failed \(exit 7\) after \d+ ms: purge refused: 403$/);
  });

  it("a run that succeeds logs no level and no stderr", async () => {
    const { hook, runs } = runner("echo chatter >&2; cat > /dev/null");
    hook.notify(patchChange(["a"]));
    await hook.close();
    const line = hookLogLine(runs[0]!);
    expect(line).toMatchObject({ msg: "on-change", status: "ok", exitCode: 0, merged: 1, paths: 1, tags: 1 });
    expect(line).not.toHaveProperty("level");
    expect(line).not.toHaveProperty("stderr");
  });

  it("a command that never reads its stdin, however long, is no failure", async () => {
    const { hook, runs } = runner("exit 0");
    const many = Array.from({ length: 20_000 }, (_, i) => `/api/organizations/demo/contents/post-${i}`);
    hook.notify(buildChange({ added: many, changed: [], removed: [] }, []));
    await hook.close();
    expect(runs.map((r) => r.status)).toEqual(["ok"]);
  });

  it("a command past the timeout gets SIGTERM, with every process it started", async () => {
    const dir = await tempDir();
    const pids = path.join(dir, "pids");
    // A pipeline: the shell, and a sleep that is not the shell's last command.
    const { hook, runs } = runner(`sleep 600 & echo $! > ${shellQuote(pids)}; cat > /dev/null; wait`, { timeoutMs: 300 });
    hook.notify(patchChange(["a"]));
    await hook.close();
    expect(runs.map((r) => [r.status, r.signal])).toEqual([["timeout", "SIGTERM"]]);
    const sleeper = Number(readFileSync(pids, "utf8"));
    expect(await pollUntil(async () => !isAlive(sleeper), 10_000)).toBe(true);
    expect(describeHookRun(runs[0]!)).toMatch(/was killed after \d+ ms \(timeout\)/);
  });

  it("a command that ignores SIGTERM gets SIGKILL after the grace", async () => {
    const { hook, runs } = runner(`trap '' TERM; cat > /dev/null; sleep 600`, { timeoutMs: 300, killGraceMs: 300 });
    hook.notify(patchChange(["a"]));
    await hook.close();
    expect(runs.map((r) => [r.status, r.signal])).toEqual([["timeout", "SIGKILL"]]);
  });

  it("what a command leaves running in the background when it exits is ended with it", async () => {
    const dir = await tempDir();
    const pids = path.join(dir, "pids");
    const { hook, runs } = runner(`sleep 600 & echo $! > ${shellQuote(pids)}; cat > /dev/null`);
    hook.notify(patchChange(["a"]));
    await hook.close();
    expect(runs.map((r) => r.status)).toEqual(["ok"]);
    const sleeper = Number(readFileSync(pids, "utf8"));
    expect(await pollUntil(async () => !isAlive(sleeper), 10_000)).toBe(true);
  });
});
