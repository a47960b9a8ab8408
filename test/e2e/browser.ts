/**
 * What the Chromium tests share: Debian's /usr/bin/chromium through playwright-core (never a
 * downloaded browser), its flags for a sandboxless CI machine, the web client built once per test
 * file into a temporary folder, and a fresh browser profile per call.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { build } from "vite";
import { startTestServer, type TestServer } from "../server/harness.js";

export const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export const chromiumAvailable = existsSync(CHROMIUM);
// CI installs Chromium (.ci/run): there, a missing browser is a failure, not a skip.
if (!chromiumAvailable && process.env.CI) throw new Error(`${CHROMIUM} not found: .ci/run installs it with apt-get`);
if (!chromiumAvailable) console.warn(`[socialworld e2e] ${CHROMIUM} not found (apt-get install -y chromium): the browser tests are skipped`);

/** Builds client/ into a new temporary folder and returns it (for startTestServer's clientDir). */
export async function buildClient(): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), "sw-client-"));
  await build({ configFile: resolve("client/vite.config.ts"), logLevel: "silent", build: { outDir, emptyOutDir: true, sourcemap: false } });
  return outDir;
}

/** Where the browser tests write their screenshots (git-ignored): look at them after a run. */
export const OUTPUT = resolve("test/e2e/output");

/** The widths each page is checked at: a desktop's and a phone's (an iPhone 12-15's CSS pixels). */
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** Saves a full-page screenshot of `page` as OUTPUT/NAME.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage: true });
}

/** A browser with a fresh profile (its own --user-data-dir); the caller closes it. */
export function launchBrowser(viewport = DESKTOP): Promise<BrowserContext> {
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "sw-chromium-")), { executablePath: CHROMIUM, headless: true, args: ARGS, viewport });
}

/**
 * For a test file: a server with the client built (`session.ts`, set before the tests run) and
 * `page()`, a page in a fresh browser profile whose errors are printed; all closed after the file.
 */
export function clientSession(): { readonly ts: TestServer; page(viewport?: { width: number; height: number }): Promise<Page> } {
  const contexts: BrowserContext[] = [];
  let server: TestServer | undefined;
  beforeAll(async () => {
    if (chromiumAvailable) server = await startTestServer({ clientDir: await buildClient() });
  }, 120_000);
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await server?.close();
  });
  return {
    get ts() {
      if (!server) throw new Error("the test server is not started (Chromium missing?)");
      return server;
    },
    async page(viewport = DESKTOP) {
      const ctx = await launchBrowser(viewport);
      contexts.push(ctx);
      const page = ctx.pages()[0] ?? (await ctx.newPage());
      page.on("pageerror", (err) => console.error(`[page] ${err.message}`));
      return page;
    },
  };
}
