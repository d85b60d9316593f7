/**
 * The documentation is read on GitHub and in a clone, so it must hold together
 * on its own: every link in README.md and docs/*.md names a file of this
 * repository (and, after `#`, one of its headings, slugged as GitHub does), and
 * nothing links or points outside it. The pages are whatever exists when the
 * test runs: a page added later is checked without touching this file.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { decodeHTML } from "entities";
import { marked, type Token } from "marked";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../fixtures/repo.js";

/** Hosts an http(s) link may point to. None: the documentation names outside sites in code, never as links. */
const ALLOWED_HOSTS: ReadonlySet<string> = new Set();

/** Text that points outside the repository, wherever it appears, code blocks included. */
const OUTSIDE_TEXT: readonly RegExp[] = [/\.\.\/shared\b/, /\/work\//, /\bfile:\/\//, /(?:^|[\s"'`(=])\/(?:home|Users|root)\//m];

/** The pages: README.md and every markdown file directly in docs/. */
function docPages(root: string): string[] {
  const docs = path.join(root, "docs");
  const inDocs = existsSync(docs) ? readdirSync(docs).filter((f) => f.endsWith(".md")).sort().map((f) => path.join("docs", f)) : [];
  return ["README.md", ...inDocs];
}

/** GitHub's heading id: lowercased, punctuation and symbols dropped, spaces to hyphens. */
export function githubSlug(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((t) => {
      if (t.type === "html") return "";
      if ("tokens" in t && t.tokens) return plainText(t.tokens);
      return "text" in t ? decodeHTML(t.text) : "";
    })
    .join("");
}

interface Page {
  hrefs: string[];
  anchors: Set<string>;
}

function readPage(file: string): Page {
  const tokens = marked.lexer(readFileSync(file, "utf8"), { gfm: true });
  const hrefs: string[] = Object.values(tokens.links).map((def) => def.href);
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  marked.walkTokens(tokens, (t) => {
    if (t.type === "heading") {
      const base = githubSlug(plainText(t.tokens ?? []).trim());
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    } else if (t.type === "link" || t.type === "image") {
      hrefs.push(t.href);
    } else if (t.type === "html") {
      for (const m of t.raw.matchAll(/\b(?:href|src)\s*=\s*["']([^"']*)["']/gi)) hrefs.push(m[1]!);
      for (const m of t.raw.matchAll(/\b(?:id|name)\s*=\s*["']([^"']*)["']/gi)) anchors.add(m[1]!);
    }
  });
  return { hrefs, anchors };
}

function isIgnoredByGit(root: string, rel: string): boolean {
  // One git process per file, not per link: most pages link the same few files.
  const key = `${root}\u0000${rel}`;
  const known = ignoredCache.get(key);
  if (known !== undefined) return known;
  const ignored = askGit(root, rel);
  ignoredCache.set(key, ignored);
  return ignored;
}

const ignoredCache = new Map<string, boolean>();

function askGit(root: string, rel: string): boolean {
  try {
    execFileSync("git", ["check-ignore", "-q", "--", rel], { cwd: root, stdio: "ignore" });
    return true;
  } catch (error) {
    // Exit 1 is "not ignored"; anything else (no git, no repository) must not pass silently.
    if ((error as { status?: number }).status === 1) return false;
    throw error;
  }
}

interface Checked {
  problems: string[];
  /** The repository-relative file each page links to. */
  targets: Map<string, Set<string>>;
}

/** Every problem of the pages' links and text, as `page: what is wrong`. */
function checkPages(root: string): Checked {
  const pages = docPages(root);
  const cache = new Map<string, Page>();
  const pageOf = (rel: string) => cache.get(rel) ?? cache.set(rel, readPage(path.join(root, rel))).get(rel)!;
  const problems: string[] = [];
  const targets = new Map<string, Set<string>>();

  for (const rel of pages) {
    const text = readFileSync(path.join(root, rel), "utf8");
    for (const pattern of OUTSIDE_TEXT) {
      const hit = pattern.exec(text);
      if (hit) problems.push(`${rel}: "${hit[0].trim()}" points outside the repository`);
    }
    const linked = new Set<string>();
    targets.set(rel, linked);
    for (const href of pageOf(rel).hrefs) {
      const bad = (what: string) => problems.push(`${rel}: (${href}) ${what}`);
      if (/^https?:/i.test(href)) {
        let host = "";
        try {
          host = new URL(href).hostname;
        } catch {
          // an unparsable URL is no allowed host
        }
        if (!ALLOWED_HOSTS.has(host)) bad("links outside the repository");
        continue;
      }
      if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//")) {
        bad("links outside the repository");
        continue;
      }
      if (href.startsWith("/")) {
        bad("is an absolute path; link relative to the page");
        continue;
      }
      const hash = href.indexOf("#");
      const filePart = (hash === -1 ? href : href.slice(0, hash)).replace(/\?.*$/, "");
      const anchor = hash === -1 ? null : decodeURIComponent(href.slice(hash + 1));
      const target = filePart === "" ? rel : path.normalize(path.join(path.dirname(rel), decodeURIComponent(filePart)));
      if (target.startsWith("..") || path.isAbsolute(target)) {
        bad("leaves the repository");
        continue;
      }
      if (!existsSync(path.join(root, target))) {
        bad(`names ${target}, which does not exist`);
        continue;
      }
      if (isIgnoredByGit(root, target)) {
        bad(`names ${target}, which git ignores: it is not in the repository`);
        continue;
      }
      linked.add(target);
      if (anchor === null) continue;
      if (target.endsWith(".md") && statSync(path.join(root, target)).isFile()) {
        if (!pageOf(target).anchors.has(anchor)) bad(`${target} has no heading #${anchor}`);
      } else if (!/^L\d+(?:-L\d+)?$/.test(anchor)) {
        bad(`#${anchor} is not a heading or a line of ${target}`);
      }
    }
  }
  return { problems, targets };
}

/** Pages in docs/ that the README's documentation index does not link. */
function unindexedPages(root: string, checked: Checked): string[] {
  const fromReadme = checked.targets.get("README.md") ?? new Set<string>();
  return docPages(root).filter((p) => p !== "README.md" && !fromReadme.has(p));
}

describe("README.md and docs/", () => {
  const checked = checkPages(REPO_ROOT);

  it("every link resolves to a file of the repository and an existing heading; nothing points outside it", () => {
    expect(checked.problems).toEqual([]);
  });

  it("the README's documentation index links every page in docs/", () => {
    expect(docPages(REPO_ROOT).length).toBeGreaterThan(1);
    expect(unindexedPages(REPO_ROOT, checked)).toEqual([]);
  });
});

describe("the link check itself", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "cdsnap-links-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  execFileSync("git", ["init", "-q"], { cwd: root });
  mkdirSync(path.join(root, "docs"));
  mkdirSync(path.join(root, "dist"));
  writeFileSync(path.join(root, ".gitignore"), "dist/\n");
  writeFileSync(path.join(root, "dist", "built.js"), "");
  writeFileSync(path.join(root, "src.ts"), "");
  writeFileSync(path.join(root, "docs", "orphan.md"), "# Not in the index\n");
  writeFileSync(
    path.join(root, "docs", "guide.md"),
    [
      "# Guide",
      "## `cdsnap dev`: edit a post, see it served",
      "## Options",
      "## Options",
      "[ok](#cdsnap-dev-edit-a-post-see-it-served) [ok](#options-1) [ok](../README.md#top) [ok](../src.ts#L3)",
      "`[in code](nowhere.md)` [ok](guide.md)",
    ].join("\n\n"),
  );
  writeFileSync(
    path.join(root, "README.md"),
    [
      "# Top",
      "[ok](docs/guide.md#options)",
      "[missing file](docs/missing.md)",
      "[missing heading](docs/guide.md#nowhere)",
      "[web](https://example.com/page) and a bare https://example.org",
      "[absolute](/etc/passwd) [out](../outside.md) [mail](mailto:a@b.c)",
      "[ignored](dist/built.js)",
      "the spec is in ../shared/spec and /work/main",
    ].join("\n\n"),
  );
  const checked = checkPages(root);

  it("reports every kind of broken or outside link, and passes the good ones", () => {
    expect(checked.problems.sort()).toEqual(
      [
        'README.md: "../shared" points outside the repository',
        'README.md: "/work/" points outside the repository',
        "README.md: (docs/missing.md) names docs/missing.md, which does not exist",
        "README.md: (docs/guide.md#nowhere) docs/guide.md has no heading #nowhere",
        "README.md: (https://example.com/page) links outside the repository",
        "README.md: (https://example.org) links outside the repository",
        "README.md: (/etc/passwd) is an absolute path; link relative to the page",
        "README.md: (../outside.md) leaves the repository",
        "README.md: (mailto:a@b.c) links outside the repository",
        "README.md: (dist/built.js) names dist/built.js, which git ignores: it is not in the repository",
      ].sort(),
    );
  });

  it("finds a page of docs/ that the README does not link", () => {
    expect(unindexedPages(root, checked)).toEqual([path.join("docs", "orphan.md")]);
  });

  it("slugs headings as GitHub does", () => {
    expect(githubSlug(".site.cdsnap/: the build's state")).toBe("sitecdsnap-the-builds-state");
    expect(githubSlug("HTTP/1.1 details")).toBe("http11-details");
    expect(githubSlug("The organization's database")).toBe("the-organizations-database");
    expect(githubSlug("Decisions D1–D14 (and × floor)")).toBe("decisions-d1d14-and--floor");
    expect(githubSlug("snake_case and Ünïcode")).toBe("snake_case-and-ünïcode");
  });
});
