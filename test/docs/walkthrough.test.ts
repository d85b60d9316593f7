/**
 * docs/walkthrough.md, run as a reader would run it: its ```sh blocks in order
 * in one bash shell, `npx cdsnap` and `sqlite3` and `curl` for real, `serve` in
 * the background where the page says "a second terminal", and every output the
 * page shows compared with what the commands printed (the conventions are at
 * the top of the page; test/fixtures/doc-blocks.ts reads them).
 *
 * The shell starts in a temporary folder that stands for a fresh clone after
 * `npm install`: the repository's package.json, node_modules linked, and
 * dist/cli.js bundled from the current sources (what `npm install` builds), so
 * `npx cdsnap` there runs this package's own bin. The page's `git clone` and
 * `npm install` block is therefore not run, nor is installing sqlite3; every
 * other block is. The port 8787 becomes a free one, as another server (the demo)
 * may hold it. The shell gets no CDSNAP_* or npm_* variable of this process, an
 * npm cache of its own, and npx is kept offline, so it can only run the local
 * bin, never fetch a package.
 *
 * Without the `sqlite3` command the test is skipped on a developer machine
 * (saying so) and fails in CI, where `.ci/run` installs it.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { copyFile, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../fixtures/build-fixture.js";
import { cliPath } from "../fixtures/cli.js";
import { compareOutput, readSteps, type Step } from "../fixtures/doc-blocks.js";
import { REPO_ROOT } from "../fixtures/repo.js";

const PAGE = "docs/walkthrough.md";
const HAVE_SQLITE3 = spawnSync("sqlite3", ["-version"]).status === 0;
const REQUIRED = Boolean(process.env.CI || process.env.CDSNAP_E2E_REQUIRED);
if (!HAVE_SQLITE3 && !REQUIRED) {
  console.warn("walkthrough test skipped: the sqlite3 command is missing (apt-get install sqlite3); CI runs it");
}

const steps = readSteps(readFileSync(path.join(REPO_ROOT, PAGE), "utf8"));
const BLOCK_MARK = "@@walkthrough-block";
const DEFAULT_PORT = /\b8787\b/g;
/** The whole page takes about 8 s; a run past this has a command that hangs. */
const RUN_LIMIT_MS = 60_000;

/** What a skipped block may hold: getting the code and installing tools, nothing the walkthrough depends on later. */
const SKIPPABLE = /^(?:#.*|git clone .*|cd [\w.-]+|npm (?:install|ci)|(?:sudo )?(?:apt|apt-get|dnf|brew) install .*)?$/;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * This process's environment as a fresh terminal would have it, with npm's
 * cache in `npmCache`: npx runs a package's own bin by linking the package into
 * `<cache>/_npx/`, which would otherwise leave a link per run in the user's cache.
 */
function readerEnv(npmCache: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(?:CDSNAP_|npm_|VITEST|INIT_CWD$|NODE_ENV$)/i.test(name)) continue;
    env[name] = value;
  }
  return {
    ...env,
    npm_config_cache: npmCache,
    npm_config_offline: "true",
    npm_config_yes: "false",
    npm_config_update_notifier: "false",
  };
}

const shellQuote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

/**
 * Writes the run's bash script, and a file per background block. Each block
 * goes behind a marker line on stdout and stderr, so the output can be cut per
 * block. A background block is started in its own process group (so the test
 * can stop it with everything it started) and awaited until it has printed a
 * first line.
 */
async function writeScript(runnable: readonly Step[], runDir: string, port: number): Promise<string> {
  const lines = [
    "set -e",
    `mark() { printf '\\n${BLOCK_MARK} %s\\n' "$1"; printf '\\n${BLOCK_MARK} %s\\n' "$1" >&2; }`,
    "await_first_line() {",
    "  for _ in $(seq 1 300); do",
    '    if [ "$(wc -l < "$1")" -ge 1 ]; then return 0; fi',
    '    if ! kill -0 "$2" 2>/dev/null; then echo "the background block exited before printing a line" >&2; return 1; fi',
    "    sleep 0.1",
    "  done",
    '  echo "the background block printed no line in 30 s" >&2; return 1',
    "}",
  ];
  for (const [i, step] of runnable.entries()) {
    const code = step.code.replace(DEFAULT_PORT, String(port));
    lines.push(`mark ${i}`);
    if (step.kind !== "background") {
      lines.push(code);
      continue;
    }
    const file = (ext: string) => shellQuote(backgroundFile(runDir, i, ext));
    await writeFile(backgroundFile(runDir, i, "sh"), code);
    lines.push(
      "set -m",
      `bash ${file("sh")} > ${file("out")} 2> ${file("err")} < /dev/null &`,
      `echo $! > ${file("pid")}`,
      "set +m",
      `await_first_line ${file("out")} $!`,
    );
  }
  lines.push(`mark ${runnable.length}`);
  const script = path.join(runDir, "walkthrough.sh");
  await writeFile(script, `${lines.join("\n")}\n`);
  return script;
}

const backgroundFile = (runDir: string, index: number, ext: string) => path.join(runDir, `block-${index}.${ext}`);

/** Output per block index, from the marker lines. */
function cut(text: string): Map<number, string> {
  const parts = text.split(new RegExp(`\\n${BLOCK_MARK} (\\d+)\\n`));
  const byBlock = new Map<number, string>();
  for (let i = 1; i < parts.length; i += 2) byBlock.set(Number(parts[i]), parts[i + 1] ?? "");
  return byBlock;
}

interface Run {
  code: number | null;
  stdout: Map<number, string>;
  stderr: Map<number, string>;
  /** Index of the last block that started. */
  reached: number;
}

describe.skipIf(!HAVE_SQLITE3 && !REQUIRED)(`${PAGE}, run as written`, () => {
  const runnable = steps.filter((step) => step.kind !== "skip");
  let dir: string;
  let runDir: string;
  let port: number;
  let run: Run;

  beforeAll(async () => {
    dir = await makeTempDir("cdsnap-walkthrough-");
    const clone = path.join(dir, "cdsnap");
    runDir = path.join(dir, "run");
    await mkdir(path.join(clone, "dist"), { recursive: true });
    await mkdir(runDir);
    // npx links the clone into its cache and runs `prepare` there once, as `npm install` did in a real
    // clone (a step this test skips); dist/ is supplied below instead, and the pack test proves `prepare`.
    const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    delete manifest.scripts.prepare;
    await writeFile(path.join(clone, "package.json"), JSON.stringify(manifest, null, 2));
    await copyFile(await cliPath(), path.join(clone, "dist", "cli.js"));
    await symlink(path.join(REPO_ROOT, "node_modules"), path.join(clone, "node_modules"));

    port = await freePort();
    const script = await writeScript(runnable, runDir, port);

    // Its own process group, so that a hung command is stopped with the shell.
    const child = spawn("bash", [script], {
      cwd: clone,
      env: readerEnv(path.join(dir, "npm-cache")),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const hung = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), RUN_LIMIT_MS);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", resolve);
    }).finally(() => clearTimeout(hung));
    const out = cut(`\n${stdout}`);
    run = { code, stdout: out, stderr: cut(`\n${stderr}`), reached: Math.max(-1, ...out.keys()) };
  }, RUN_LIMIT_MS + 30_000);

  afterAll(async () => {
    if (!runDir) return;
    for (const [i, step] of runnable.entries()) {
      if (step.kind !== "background") continue;
      const pid = Number(await readFile(backgroundFile(runDir, i, "pid"), "utf8").catch(() => ""));
      if (pid > 0) await stopGroup(pid);
    }
    await removeDir(dir);
  });

  it("runs every command block to the end, each exiting 0", async () => {
    const failed = runnable[run.reached];
    if (failed) {
      const background = failed.kind === "background" ? await readFile(backgroundFile(runDir, run.reached, "err"), "utf8").catch(() => "") : "";
      const stdout = run.stdout.get(run.reached) ?? "";
      expect.fail(`the block at ${PAGE}:${failed.line} failed; its output:\n${stdout}\nits errors:\n${run.stderr.get(run.reached) ?? ""}${background}`);
    }
    expect(run.code).toBe(0);
  });

  for (const [i, step] of runnable.entries()) {
    if (!step.expected) continue;
    it(`prints what ${PAGE}:${step.expected.line} shows`, async () => {
      const actual =
        step.kind === "background"
          ? await readFile(backgroundFile(runDir, i, "out"), "utf8").catch(() => undefined)
          : run.stdout.get(i);
      expect(actual, `the block at ${PAGE}:${step.line} never ran`).toBeDefined();
      const difference = compareOutput(step.expected!.text.replace(DEFAULT_PORT, String(port)), actual!);
      expect(difference, `${difference}\nits stderr:\n${run.stderr.get(i) ?? ""}`).toBeNull();
    });
  }
});

describe(`what ${PAGE} leaves out, and how its outputs are compared`, () => {
  it("leaves out only getting the code and installing tools", () => {
    const skipped = steps.filter((step) => step.kind === "skip");
    expect(skipped.length).toBeGreaterThan(0);
    for (const step of skipped) {
      for (const line of step.code.split("\n")) expect(line.trim(), `${PAGE}:${step.line}`).toMatch(SKIPPABLE);
    }
  });

  const shown = "HTTP/1.1 200 OK\n…\n{\"id\":\"alder\",\"name\":\"…\"}";

  it("accepts elided lines and text", () => {
    expect(compareOutput(shown, "HTTP/1.1 200 OK\r\nDate: x\r\nETag: y\r\n\r\n{\"id\":\"alder\",\"name\":\"Alder & Oak\"}\n")).toBeNull();
  });

  it("refuses a changed value, a missing line and an extra line", () => {
    expect(compareOutput(shown, 'HTTP/1.1 200 OK\n{"id":"oak","name":"Oak"}')).not.toBeNull();
    expect(compareOutput(shown, 'HTTP/1.1 401 Unauthorized\n{"id":"alder","name":"Oak"}')).not.toBeNull();
    expect(compareOutput(shown, 'HTTP/1.1 200 OK\n{"id":"alder","name":"Oak"}\nmore')).not.toBeNull();
  });
});

/** Stops a background block and everything it started (its process group), then waits for the group to be gone. */
async function stopGroup(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pid, "SIGTERM");
  for (let waited = 0; waited < 5_000 && alive(); waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  if (alive()) process.kill(-pid, "SIGKILL");
}
