/**
 * The API reference page (`npm run docs`) as a reader gets it: generated into a
 * temporary folder, opened from the file system in headless Chromium (Debian's
 * `chromium`, driven by playwright-core) with every request that leaves the file
 * refused and recorded. Every operation of schemas/openapi.json must be on the page
 * at its own address, under its summary, with its method and path; nothing may be
 * fetched from the network and nothing may go wrong in the console.
 *
 * A full-page screenshot is left in test-output/api-reference.png (gitignored).
 * Without Chromium the test is skipped on a developer machine (saying so) and fails
 * in CI (`CI` or `CDSNAP_E2E_REQUIRED` set), as the other browser test does.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CHROMIUM_REQUIRED, HAVE_CHROMIUM, launchChromium, warnIfNoChromium } from "../fixtures/chromium.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SCREENSHOT = path.join(ROOT, "test-output/api-reference.png");
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

warnIfNoChromium("API reference test");

interface Operation {
  method: string;
  path: string;
  operationId: string;
  summary: string;
  tag: string;
}

interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  tags?: string[];
}

/** Every path × method of the document, as the page should show it. */
function operationsOf(file: string): Operation[] {
  const doc = JSON.parse(readFileSync(file, "utf8")) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([apiPath, item]) =>
    Object.entries(item)
      .filter(([key]) => METHODS.includes(key))
      .map(([method, value]) => {
        const op = value as OpenApiOperation;
        if (!op.operationId || !op.summary || !op.tags?.[0]) {
          throw new Error(`${method.toUpperCase()} ${apiPath} has no operationId, summary or tag: the page could not list it by name`);
        }
        return { method: method.toUpperCase(), path: apiPath, operationId: op.operationId, summary: op.summary, tag: op.tags[0] };
      }),
  );
}

/** Redoc's address of an operation: its first tag, then its operationId, lower-cased. */
const anchorOf = (op: Operation) => `${op.tag.toLowerCase().replace(/[^a-z0-9]+/g, "-")}/${op.operationId.toLowerCase()}`;

let dir: string;
let pageUrl: string;
let context: BrowserContext;
const offFile: string[] = [];
const consoleErrors: string[] = [];
const pageErrors: string[] = [];

function expectNothingWentWrong(): void {
  expect(offFile, "requests that left the file").toEqual([]);
  expect(consoleErrors, "console errors").toEqual([]);
  expect(pageErrors, "page errors").toEqual([]);
}

async function openReference(): Promise<Page> {
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => pageErrors.push(error.stack ?? error.message));
  await page.goto(pageUrl);
  // Redoc shows its logo only once its script has taken over the prerendered page,
  // and the logo is the image the generator inlines: wait for it, or for the first
  // thing that went wrong, which is then what the test reports.
  const logoLoaded = () =>
    page
      .locator('img[alt="redocly logo"]')
      .evaluateAll((images: { complete: boolean; naturalWidth: number }[]) => images.some((img) => img.complete && img.naturalWidth > 0));
  const problems = () => offFile.length + consoleErrors.length + pageErrors.length;
  await expect.poll(async () => problems() > 0 || (await logoLoaded()), { timeout: 30_000 }).toBe(true);
  expectNothingWentWrong();
  return page;
}

describe.skipIf(!HAVE_CHROMIUM && !CHROMIUM_REQUIRED)("the API reference page, opened from a file in headless Chromium", () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "cdsnap-api-reference-"));
    const html = path.join(dir, "docs", "api.html");
    await promisify(execFile)(process.execPath, [path.join(ROOT, "scripts/api-reference.mjs"), "--out", html], { cwd: ROOT });
    pageUrl = pathToFileURL(html).href;

    context = await launchChromium(path.join(dir, "profile"), { width: 1280, height: 800 });
    // The page must be whole in its file: anything else is refused, and recorded so
    // that the test names it.
    await context.route(
      (url) => url.protocol !== "file:",
      (route) => {
        offFile.push(route.request().url());
        return route.abort("blockedbyclient");
      },
    );
  });

  afterAll(async () => {
    await context?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("it opens with no network, titled cdsnap API, with no console or page error", async () => {
    const page = await openReference();
    expect(await page.title()).toBe("cdsnap API");
    const doc = JSON.parse(readFileSync(path.join(ROOT, "schemas/openapi.json"), "utf8")) as { info: { title: string } };
    expect(await page.locator("#api-content h1").first().innerText()).toContain(doc.info.title);

    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    console.log(`API reference screenshot: ${SCREENSHOT}`);
    await page.close();
    expectNothingWentWrong();
  });

  test("every operation of schemas/openapi.json has its own section: its summary as the heading, its method and path", async () => {
    const operations = operationsOf(path.join(ROOT, "schemas/openapi.json"));
    expect(operations.length).toBeGreaterThan(0);
    const page = await openReference();
    for (const op of operations) {
      const anchor = anchorOf(op);
      await page.goto(`${pageUrl}#/${anchor}`);
      const section = page.locator(`[id="${anchor}"]`);
      try {
        await section.waitFor({ timeout: 30_000 });
      } catch {
        throw new Error(`${op.method} ${op.path} (${op.operationId}) is not on the page: no section at #/${anchor}`);
      }
      expect(await section.locator("h1, h2, h3").first().innerText(), op.operationId).toBe(op.summary);
      expect((await section.innerText()).replace(/\s+/g, " "), op.operationId).toContain(`${op.method} ${op.path}`);
    }
    await page.close();
    expectNothingWentWrong();
  });
});
