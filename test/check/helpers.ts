/**
 * Fixtures for `cdsnap check`: a temporary folder with a migrated database
 * holding one organization (`acme`, categories `news` and `guides`) and a
 * content folder the tests write posts into, line by line, so every expected
 * `file:line` can be read off the test.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { checkSources, type CheckOptions, type CheckResult } from "../../src/check/check-sources.js";
import type { Finding } from "../../src/check/lint-rules.js";
import { migrate } from "../../src/db/migrations.js";
import { openDatabase } from "../../src/db/open.js";
import { runCli, type CliResult } from "../helpers/fixture.js";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The instant the check tests run at. */
export const NOW = new Date("2026-07-01T00:00:00Z");

export interface CheckFixture {
  dir: string;
  db: string;
  content: string;
}

export async function makeCheckFixture(): Promise<CheckFixture> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-check-"));
  const fx = { dir, db: path.join(dir, "db.sqlite"), content: path.join(dir, "content") };
  await mkdir(path.join(fx.content, "acme"), { recursive: true });
  const db = openDatabase(fx.db, { create: true });
  try {
    migrate(db);
    db.prepare("INSERT INTO organizations (id, name, slug) VALUES ('acme', 'Acme', 'acme')").run();
    db.prepare("INSERT INTO organizations (id, name, slug) VALUES ('other', 'Other', 'other')").run();
    db.prepare("INSERT INTO categories (org_id, id, slug, value) VALUES ('acme', 'c1', 'news', 'News')").run();
    db.prepare("INSERT INTO categories (org_id, id, slug, value) VALUES ('acme', 'c2', 'guides', 'Guides')").run();
  } finally {
    db.close();
  }
  return fx;
}

export async function removeFixture(fx: CheckFixture | undefined): Promise<void> {
  if (fx) await rm(fx.dir, { recursive: true, force: true });
}

/**
 * A post file: `---`, the six required keys on lines 2-7 (with `slug` on line 4),
 * then `extra` front matter lines from line 8, `---`, and the body.
 */
export function post(slug: string, extra: string[] = [], body = "A body.\n", status = "published", publishedAt = "2026-01-10"): string {
  return [
    "---",
    `id: ${slug}`,
    `title: Post ${slug}`,
    `slug: ${slug}`,
    `status: ${status}`,
    `publishedAt: ${publishedAt}`,
    "authorName: Ada",
    ...extra,
    "---",
    body,
  ].join("\n");
}

export async function writePost(fx: CheckFixture, rel: string, text: string): Promise<void> {
  const file = path.join(fx.content, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

export function check(fx: CheckFixture, options: Partial<CheckOptions> = {}): Promise<CheckResult> {
  return checkSources({ db: fx.db, content: fx.content, now: NOW, ...options });
}

/** Every finding (errors and warnings) of one rule, as `where message`. */
export function ofRule(result: CheckResult, rule: string): Finding[] {
  return [...result.errors, ...result.warnings].filter((f) => f.rule === rule);
}

export { runCli, type CliResult };
