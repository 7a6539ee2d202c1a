/**
 * A real browser (Debian's chromium, driven by playwright-core) against a real `warren serve`,
 * for the UI tests and the UI bench. Everything started here is stopped by `close()`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { type ServerProcess, startServer } from '../helpers/server.ts';

export const CHROMIUM = '/usr/bin/chromium';

/** A script agent that answers every message it reads. */
export const LISTENER = { steps: [{ listen: { say: 'heard ${input.text}' } }] };
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The flags that keep chromium from reaching for the network (there is none) and stalling. */
export const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `npm test` builds first; a test file run alone builds the UI when dist/web is missing. */
export function ensureWebBuilt(): void {
  if (existsSync(join(ROOT, 'dist/web/index.html'))) return;
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      'web/vite.config.ts',
      '--logLevel',
      'warn',
    ],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  if (r.status !== 0) throw new Error(`web build failed:\n${r.stdout}${r.stderr}`);
}

export interface UiRig {
  server: ServerProcess;
  dataDir: string;
  browser: Browser;
  /** A logged-in browser context (cookie set through the login form). */
  login(): Promise<{ context: BrowserContext; page: Page }>;
  /** Run `fn` on a logged-in page; its context is closed whatever `fn` does. */
  withPage(fn: (page: Page) => Promise<void>): Promise<void>;
  /** Spawn a script session that answers every message; its id. */
  spawnListener(title: string): Promise<string>;
  close(): Promise<void>;
}

/** A server on a fresh data dir and a browser; `close` stops both and removes the dir. */
export async function uiRig(): Promise<UiRig> {
  ensureWebBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-ui-'));
  let server: ServerProcess | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close().catch(() => {});
    await server?.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    server = await startServer({ dataDir });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // launch() gives each run a fresh temporary profile (user-data-dir) of its own.
      args: ARGS,
      timeout: 30_000,
    });
  } catch (error) {
    await close();
    throw error;
  }
  const s = server;
  const b = browser;
  const login = async () => {
    const context = await b.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // Generous: CI runs two test files at once on two cores, one of them may be a browser.
    page.setDefaultTimeout(20_000);
    await page.goto(`${s.url}/coordination`);
    await page.getByLabel('Operator key').fill(s.key);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    return { context, page };
  };
  return {
    server: s,
    dataDir,
    browser: b,
    login,
    async withPage(fn) {
      const { context, page } = await login();
      try {
        await fn(page);
      } finally {
        await context.close();
      }
    },
    async spawnListener(title) {
      const r = await s.api<{ session: { id: string } }>('POST', '/v1/sessions', { title, script: LISTENER });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return r.json.session.id;
    },
    close,
  };
}
