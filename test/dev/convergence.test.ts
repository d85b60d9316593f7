/**
 * `cdsnap dev` loses no save, whatever the timing: bursts of saves, editors'
 * write-rename-delete dances, a post deleted and written again, posts added
 * and removed, a broken save fixed moments later, database commits at the same
 * moment, saves during the first build; all of it while a busy process runs on
 * every core. After each burst the served tree must converge on the sources as
 * they are after the burst's last event. Waiting is on builds, not on time:
 * after each build the answer is compared again, and the bound on waiting is
 * far above anything a build takes.
 */
import { mkdir, mkdtemp, open, rename, rm, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import { DEMO_READ_KEY } from "../../src/db/demo-seed.js";
import { openDatabase } from "../../src/db/open.js";
import { createDatabase } from "../fixtures/database.js";
import { startDev, type RunningDev } from "../../src/dev/dev-server.js";
import { startCpuHogs, type CpuHogs } from "../fixtures/cpu-hog.js";
import { DevOutput } from "../fixtures/dev-output.js";
import { budget, percentile, printFigures, scaled, seededRandom, SEED } from "../fixtures/soak.js";

const BURSTS = scaled(60, 5);
const STARTS = scaled(6, 5);

interface Post {
  file: string;
  title: string;
}

function postText(slug: string, title: string): string {
  return `---\nid: ${slug}\ntitle: ${title}\nslug: ${slug}\nstatus: published\npublishedAt: 2025-01-10\nauthorName: Ada\ncategory: brewing\n---\nBody of ${slug}.\n`;
}

const brokenText = (slug: string) => postText(slug, "Broken").replace(`slug: ${slug}`, `slug: [${slug}`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Dev {
  output: DevOutput;
  running: RunningDev;
  url: string;
}

interface Served {
  slug: string;
  title: string;
  categoryName: string | null;
}

async function servedContents(url: string): Promise<Served[]> {
  const res = await fetch(`${url}/api/organizations/demo/contents`, { headers: { "x-api-key": DEMO_READ_KEY } });
  const body = (await res.json()) as { items: Served[] };
  return body.items.map(({ slug, title, categoryName }) => ({ slug, title, categoryName })).sort((a, b) => (a.slug < b.slug ? -1 : 1));
}

/** Waits until the served list equals `expected`; returns how long it took. */
async function converge(dev: Dev, expected: Served[], what: string): Promise<number> {
  let served: Served[] = [];
  return dev.output
    .until(async () => JSON.stringify((served = await servedContents(dev.url))) === JSON.stringify(expected), what)
    .catch((error: Error) => {
      throw new Error(`${error.message}\nserved:   ${JSON.stringify(served)}\nexpected: ${JSON.stringify(expected)}\n(seed ${SEED})`);
    });
}

let dir: string;
let db: string;
let content: string;
let hogs: CpuHogs;

function setCategoryName(name: string): void {
  const handle = openDatabase(db);
  try {
    handle.prepare("UPDATE categories SET value = ? WHERE org_id = 'demo' AND slug = 'brewing'").run(name);
  } finally {
    handle.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-dev-converge-"));
  db = path.join(dir, "db.sqlite");
  content = path.join(dir, "content");
  await mkdir(path.join(content, "demo"), { recursive: true });
  createDatabase(db, { demo: true });
  hogs = await startCpuHogs();
});

afterAll(async () => {
  await hogs?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("cdsnap dev under CPU load", () => {
  test(
    "after every burst of saves, renames, deletions and commits, the served tree converges on the sources",
    async () => {
      const random = seededRandom();
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const pause = () => sleep(Math.floor(random() * 180));
      const posts = new Map<string, Post>();
      let category = "Brewing";
      let serial = 0;
      const title = () => `Title ${++serial}`;

      const folder = path.join(content, "demo");
      for (const slug of ["alpha", "beta", "gamma"]) {
        const post = { file: path.join(folder, `${slug}.md`), title: title() };
        posts.set(slug, post);
        await writeFile(post.file, postText(slug, post.title));
      }
      setCategoryName(category);

      const output = new DevOutput();
      const running = await startDev({ db, content, out: path.join(dir, "site"), port: 0, print: output.print });
      const dev: Dev = { output, running, url: await running.listening };
      const expected = (): Served[] =>
        [...posts].map(([slug, p]) => ({ slug, title: p.title, categoryName: category })).sort((a, b) => (a.slug < b.slug ? -1 : 1));

      /** Saves as an editor writing a buffer at a time does: truncated, then written in two parts. */
      const save = async (slug: string) => {
        const post = posts.get(slug)!;
        post.title = title();
        const text = postText(slug, post.title);
        const cut = Math.floor(random() * text.length);
        const handle = await open(post.file, "w");
        try {
          await handle.write(text.slice(0, cut));
          await sleep(Math.floor(random() * 60));
          await handle.write(text.slice(cut));
        } finally {
          await handle.close();
        }
      };
      const bursts: Record<string, () => Promise<void>> = {
        async saves() {
          const slug = pick([...posts.keys()]);
          const times = 1 + Math.floor(random() * 4);
          for (let i = 0; i < times; i++) {
            if (i > 0) await pause();
            await save(slug);
          }
        },
        async "save through a temporary file and a rename"() {
          const [slug, post] = pick([...posts]);
          post.title = title();
          const temporary = path.join(path.dirname(post.file), `.${slug}.md.tmp-${serial}`);
          await writeFile(temporary, postText(slug, post.title));
          await rename(temporary, post.file);
        },
        async "an editor's backup dance: rename away, write anew, delete the backup"() {
          const [slug, post] = pick([...posts]);
          const backup = `${post.file}~`;
          await rename(post.file, backup);
          post.title = title();
          await writeFile(post.file, postText(slug, post.title));
          await pause();
          await unlink(backup);
        },
        async "deleted and written again"() {
          const [slug, post] = pick([...posts]);
          await unlink(post.file);
          await pause();
          post.title = title();
          await writeFile(post.file, postText(slug, post.title));
        },
        async "a post added, in a new folder or not"() {
          const slug = `added-${serial + 1}`;
          const sub = random() < 0.5 ? path.join(folder, `folder-${serial + 1}`) : folder;
          await mkdir(sub, { recursive: true });
          const post = { file: path.join(sub, `${slug}.md`), title: title() };
          posts.set(slug, post);
          await writeFile(post.file, postText(slug, post.title));
        },
        async "a post removed"() {
          const added = [...posts.keys()].filter((slug) => slug.startsWith("added-"));
          if (added.length === 0) return bursts["a post added, in a new folder or not"]!();
          const slug = pick(added);
          await unlink(posts.get(slug)!.file);
          posts.delete(slug);
        },
        async "a broken save fixed moments later"() {
          const [slug, post] = pick([...posts]);
          await writeFile(post.file, brokenText(slug));
          await pause();
          post.title = title();
          await writeFile(post.file, postText(slug, post.title));
        },
        async "a database commit beside a save"() {
          const slug = pick([...posts.keys()]);
          const commit = async () => {
            await pause();
            category = `Brewing ${++serial}`;
            setCategoryName(category);
          };
          await Promise.all([save(slug), commit()]);
        },
      };

      // Plain saves are what authors do most, and where a watcher folds writes together.
      const kinds = [...Object.keys(bursts), "saves", "saves"];
      const times: number[] = [];
      try {
        for (let i = 0; i < BURSTS; i++) {
          const kind = pick(kinds);
          await bursts[kind]!();
          times.push(await converge(dev, expected(), `burst ${i + 1} (${kind})`));
        }
      } finally {
        await running.close();
      }
      printFigures(
        `dev convergence under load: ${BURSTS} bursts, ${output.builds} builds; after a burst's last write served in ` +
          `median ${Math.round(percentile(times, 50))} ms, p95 ${Math.round(percentile(times, 95))} ms, max ${Math.round(Math.max(...times))} ms (seed ${SEED})`,
      );
    },
    budget(BURSTS * 10_000),
  );

  test(
    "a save made while dev starts, before, during or after its first build, is served",
    async () => {
      const random = seededRandom(SEED + 1);
      const firstContent = path.join(dir, "content-first");
      const file = path.join(firstContent, "demo", "alpha.md");
      await mkdir(path.dirname(file), { recursive: true });
      for (let i = 0; i < STARTS; i++) {
        const out = path.join(dir, `site-first-${i}`);
        await writeFile(file, postText("alpha", `Before start ${i}`));
        const output = new DevOutput();
        const starting = startDev({ db, content: firstContent, out, port: 0, print: output.print });
        // The draw decides whether the save lands before, during or after the first build.
        await sleep(Math.floor(random() * 150));
        const title = `Saved at start ${i}`;
        await writeFile(file, postText("alpha", title));
        const running = await starting;
        try {
          const dev: Dev = { output, running, url: await running.listening };
          const category = (await servedContents(dev.url))[0]?.categoryName ?? null;
          await converge(dev, [{ slug: "alpha", title, categoryName: category }], `start ${i + 1}`);
        } finally {
          await running.close();
        }
      }
    },
    budget(STARTS * 40_000),
  );
});
