/**
 * Area 5, crashes of the build. `kill -9` of `cdsnap build` at random moments:
 * the served tree is always the complete old one or the complete new one and
 * every file parses; the next build converges to a clean build. A build whose
 * output filesystem fills up, or turns read-only, fails cleanly, says so, and
 * leaves the live tree intact.
 * (The server's crashes are in crash-server.test.ts.)
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, readlink, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { DEMO_CONTENT } from "../fixtures/repo.js";
import { removeFixture } from "../fixtures/build-fixture.js";
import { writeBulkPosts } from "../fixtures/posts.js";
import { treeDigest } from "../fixtures/tree.js";
import { runCliBounded, startCli } from "../fixtures/cli.js";
import { makeSite, serveSite, type Site } from "../fixtures/served-site.js";
import { api, httpCall } from "../fixtures/http.js";
import { plantCanarySecrets, SecretScanner, secretsOf } from "../fixtures/secrets.js";
import { budget, printFigures, scaled, SEED, seededRandom } from "../fixtures/soak.js";
import { sleep } from "../fixtures/wait.js";

const POSTS = 2_000;
const KILLS = scaled(20, 5);
const rand = seededRandom();

const figures = {
  builds: { kills: 0, old: 0, new: 0, completed: 0, files: 0, gets: 0, getFailures: 0, converged: false, buildMs: 0 },
  enospc: { ran: false, reason: "", failedCleanly: 0, liveIntact: 0 },
};
const scanner = new SecretScanner(secretsOf([]));
/** The first few failed GETs, so a failure says what was answered. */
const failedGets: string[] = [];

afterAll(() => {
  const b = figures.builds;
  printFigures(
    `crashes, builds: ${b.kills} x kill -9 of a ${POSTS}-post build (seed ${SEED}; a clean build takes ${b.buildMs} ms): ` +
      `${b.old} left the complete old tree, ${b.new} the complete new one, ${b.completed} finished first; ` +
      `0 mixed or unparsable of ${b.files} files each; ${b.gets} GETs meanwhile, ${b.getFailures} failed${failedGets.length ? ` (${failedGets.join(" | ")})` : ""}; next build converged: ${b.converged ? "yes" : "no"}`,
  );
  printFigures(
    figures.enospc.ran
      ? `crashes, full disk: ${figures.enospc.failedCleanly} builds on a full filesystem failed cleanly (exit 1, no stack), live tree intact ${figures.enospc.liveIntact} times, then converged`
      : `crashes, full disk: skipped (${figures.enospc.reason})`,
  );
  printFigures(`crashes (builds), secrets: ${scanner.summary()}`);
});

// --------------------------------------------------------------- kill -9 builds

describe("kill -9 a build", () => {
  let site: Site;
  let content: string;
  const hashes = new Map<string, string>();

  beforeAll(async () => {
    site = await makeSite({ built: false });
    scanner.add(plantCanarySecrets(site.db));
    content = path.join(site.dir, "content");
    await cp(DEMO_CONTENT, content, { recursive: true });
    // The clean-build hash of each variant of the content, built into folders of their own.
    for (const variant of ["B", "A"]) {
      await writeBulkPosts(content, "demo", POSTS, variant);
      const out = variant === "A" ? site.out : path.join(site.dir, `clean-${variant}`);
      const run = await runCliBounded(["build", "--db", site.db, "--content", content, "--out", out], 120_000);
      expect(run.code, run.stderr).toBe(0);
      if (variant === "B") figures.builds.buildMs = run.ms;
      hashes.set(variant, (await treeDigest(out)).hash);
    }
  }, 240_000);

  afterAll(() => removeFixture(site));

  it(`${KILLS} builds killed at random moments leave the old or the new tree, whole; the next build converges`, { timeout: budget(240_000, 5) }, async () => {
    const served = await serveSite(site);
    const sample = [api("demo", "contents"), api("demo", "organization"), ...Array.from({ length: 30 }, (_, i) => api("demo", `contents/bulk-${String(i * 60).padStart(5, "0")}`))];
    let reading = true;
    const reader = (async () => {
      for (let i = 0; reading; i++) {
        const res = await httpCall(served.url, { path: sample[i % sample.length]!, key: DEMO_READ_KEY });
        figures.builds.gets++;
        scanner.response(res.status, res.headers, res.text, "GET during builds");
        try {
          if (res.status !== 200) throw new Error(String(res.status));
          JSON.parse(res.text);
        } catch {
          figures.builds.getFailures++;
          if (failedGets.length < 5) failedGets.push(`${res.status} ${sample[i % sample.length]}: ${res.text.slice(0, 200)}`);
        }
        await sleep(5);
      }
    })();

    try {
      let live = hashes.get("A")!;
      let variant = "A";
      let sources = "A";
      let estimateMs = figures.builds.buildMs;
      for (let k = 0; k < KILLS; k++) {
        // The sources always differ from the live tree, so every build has a new tree to write.
        const next = variant === "A" ? "B" : "A";
        if (sources !== next) {
          await writeBulkPosts(content, "demo", POSTS, next);
          sources = next;
        }
        // Anywhere from the start to past the swap: reading, rendering, writing the next generation, swapping.
        const delay = rand() * 1.3 * estimateMs;
        const { child, done } = startCli(["build", "--db", site.db, "--content", content, "--out", site.out], 120_000);
        await Promise.race([sleep(delay), done]);
        child.kill("SIGKILL");
        const run = await done;
        figures.builds.kills++;
        scanner.text(run.stdout + run.stderr, "build output");
        expect(run.timedOut).toBe(false);
        if (run.signal !== "SIGKILL") expect(run.code, run.stderr).toBe(0);

        // --out points at a generation, and that generation is whole: exactly the old or the new clean tree.
        expect(await readlink(site.out)).toMatch(/gens\/\d{6,}\/tree$/);
        const now = await treeDigest(site.out);
        figures.builds.files = now.files;
        expect(now.unparsable, `after a kill at ${delay.toFixed(0)} ms`).toEqual([]);
        expect([live, hashes.get(next)], `after a kill at ${delay.toFixed(0)} ms`).toContain(now.hash);
        if (run.signal !== "SIGKILL") figures.builds.completed++;
        else if (now.hash === live) figures.builds.old++;
        else figures.builds.new++;
        // Builds here run slower or faster than the reference one (a loaded machine): a finished
        // build sets the estimate, one still short of its swap past the estimate stretches it.
        if (run.signal !== "SIGKILL") estimateMs = run.ms;
        else if (now.hash === live && delay > estimateMs) estimateMs = delay * 1.2;
        if (now.hash !== live) {
          live = now.hash;
          variant = next;
        }
      }

      // A build after all that converges to the clean build of its sources and cleans up after the killed ones.
      const final = variant === "A" ? "B" : "A";
      if (sources !== final) await writeBulkPosts(content, "demo", POSTS, final);
      const run = await runCliBounded(["build", "--db", site.db, "--content", content, "--out", site.out], 120_000);
      expect(run.code, run.stderr).toBe(0);
      expect((await treeDigest(site.out)).hash).toBe(hashes.get(final));
      figures.builds.converged = true;
      expect((await readdir(path.join(site.stateDir, "gens"))).length).toBeLessThanOrEqual(2);
      expect(existsSync(path.join(site.stateDir, "lock"))).toBe(false);
      await scanner.scanFiles(site.dir);
    } finally {
      reading = false;
      await reader;
      await served.close();
      scanner.logs(served.logs, "server log");
    }
    expect(figures.builds.getFailures, failedGets.join("\n")).toBe(0);
    expect(scanner.found).toEqual([]);
    // Both ends of the window were hit: some kills before the swap, some after it or a finished build.
    expect(figures.builds.old).toBeGreaterThan(0);
  });
});

// --------------------------------------------------------------- small filesystems

/**
 * A tmpfs of `size` mounted for one test, unmounted after it: `mount()` gives
 * its folder, or null where this user cannot mount one (not root), which a
 * test then skips; as root a failure to mount is the test's failure.
 */
function smallFilesystem(name: string, size: string) {
  let mounted: string | undefined;
  afterAll(async () => {
    if (!mounted) return;
    try {
      execFileSync("umount", [mounted]);
    } catch {
      execFileSync("umount", ["-l", mounted]);
    }
    await rm(mounted, { recursive: true, force: true });
  });
  return async (): Promise<string | null> => {
    const dir = path.join(os.tmpdir(), `cdsnap-${name}-${randomBytes(4).toString("hex")}`);
    await mkdir(dir);
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      if (process.getuid?.() === 0) throw error;
      return null;
    }
    mounted = dir;
    return dir;
  };
}

// --------------------------------------------------------------- full disk

describe("a full output filesystem", () => {
  let site: Site;
  const mountSmall = smallFilesystem("enospc", "2m");

  beforeAll(async () => {
    site = await makeSite({ built: false });
  });
  afterAll(async () => {
    await removeFixture(site);
  });

  it("a build that runs out of space fails cleanly, leaves the live tree intact, and a later build converges", { timeout: budget(120_000, 2) }, async (ctx) => {
    const mount = await mountSmall();
    if (!mount) {
      figures.enospc.reason = "not root: cannot mount a small tmpfs";
      printFigures(`crashes, full disk: skipped because this user (uid ${process.getuid?.()}) cannot mount a tmpfs`);
      ctx.skip();
      return;
    }
    figures.enospc.ran = true;
    const out = path.join(mount, "site");
    const content = path.join(site.dir, "content");
    await cp(DEMO_CONTENT, content, { recursive: true });
    const build = () => runCliBounded(["build", "--db", site.db, "--content", content, "--out", out], 120_000);

    const first = await build();
    expect(first.code, first.stderr).toBe(0);
    const live = await treeDigest(out);
    const link = await readlink(out);

    const expectCleanFailure = async (what: string) => {
      const run = await build();
      expect(run.timedOut, what).toBe(false);
      expect(run.code, `${what}: ${run.stderr}`).toBe(1);
      expect(run.stderr, what).toMatch(/disk is full/);
      expect(run.stderr, what).not.toMatch(/\n\s+at /);
      figures.enospc.failedCleanly++;
      expect(await readlink(out), what).toBe(link);
      const now = await treeDigest(out);
      expect(now.hash, what).toBe(live.hash);
      expect(now.unparsable).toEqual([]);
      figures.enospc.liveIntact++;
      // The half-written generation was removed: only the live one is left.
      expect(await readdir(path.join(mount, ".site.cdsnap", "gens")), what).toEqual([link.split("/").at(-2)]);
    };

    // A next generation far larger than the filesystem.
    await writeBulkPosts(content, "demo", 1_000, "big");
    await expectCleanFailure("a tree larger than the disk");

    // A filesystem filled to the last block by someone else: even small writes fail.
    await rm(path.join(content, "demo", "bulk"), { recursive: true });
    await writeBulkPosts(content, "demo", 3, "small");
    const filler = path.join(mount, "filler");
    try {
      await writeFile(filler, Buffer.alloc(4 * 2 ** 20));
    } catch {
      // ENOSPC: the filler took every block there was.
    }
    await expectCleanFailure("a disk already full");

    await rm(filler, { force: true });
    const ok = await build();
    expect(ok.code, ok.stderr).toBe(0);
    const clean = path.join(site.dir, "clean");
    const reference = await runCliBounded(["build", "--db", site.db, "--content", content, "--out", clean]);
    expect(reference.code).toBe(0);
    expect((await treeDigest(out)).hash).toBe((await treeDigest(clean)).hash);
  });
});

// ------------------------------------------------------ read-only filesystem

describe("a read-only output filesystem", () => {
  let site: Site;
  const mountSmall = smallFilesystem("erofs", "16m");

  beforeAll(async () => {
    site = await makeSite({ built: false });
  });
  afterAll(async () => {
    await removeFixture(site);
  });

  it("a build the machine refuses to write says what and where, exits 1 (not a bug's 70), and leaves the tree as it was", { timeout: budget(60_000, 2) }, async (ctx) => {
    const mount = await mountSmall();
    if (!mount) {
      printFigures(`crashes, read-only disk: skipped because this user (uid ${process.getuid?.()}) cannot mount a tmpfs`);
      ctx.skip();
      return;
    }
    const out = path.join(mount, "site");
    const content = path.join(site.dir, "content");
    await cp(DEMO_CONTENT, content, { recursive: true });
    const build = (...flags: string[]) => runCliBounded(["build", "--db", site.db, "--content", content, "--out", out, ...flags], 60_000);
    const first = await build();
    expect(first.code, first.stderr).toBe(0);
    const live = await treeDigest(out);

    execFileSync("mount", ["-o", "remount,ro", mount], { stdio: "pipe" });
    await writeBulkPosts(content, "demo", 1, "after-remount");
    const refused = await build();
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`^cdsnap: the file system is read-only \\(\\w+ ${mount}/\\S+\\)\\n$`));
    const asJson = await build("--json");
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ ok: false, code: "system_refused", message: expect.stringContaining(mount) });
    expect((await treeDigest(out)).hash).toBe(live.hash);
  });
});
