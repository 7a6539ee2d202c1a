/**
 * Browser logins live in the database: a cookie from before a server restart still logs the
 * browser in afterwards (SQLite and PostgreSQL), only a hash of its token is stored, and
 * logging out ends it for every server on that database.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { Store } from '../../src/store/store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { createIds } from '../../src/util/ids.ts';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { forEachStore } from '../helpers/stores.ts';
import { needs } from '../helpers/system-tools.ts';
import { ARGS, CHROMIUM, ensureWebBuilt } from './browser.ts';

const dirs: string[] = [];
const servers: ServerProcess[] = [];
let browser: Browser | undefined;
after(async () => {
  await browser?.close().catch(() => {});
  await Promise.allSettled(servers.map((s) => s.stop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

forEachStore('browser logins survive a restart', (target) => {
  it('the cookie set before the restart works after it; the table holds only its hash', {
    timeout: 90_000,
    skip: needs(CHROMIUM),
  }, async () => {
    ensureWebBuilt();
    const dataDir = mkdtempSync(join(tmpdir(), 'warren-ui-login-'));
    dirs.push(dataDir);
    const loc = target.location();
    const db = target.kind === 'sqlite' ? join(dataDir, 'warren.db') : `${loc.url}?schema=${loc.schema}`;
    browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const s1 = await startServer({ dataDir, db });
      servers.push(s1);
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${s1.url}/sessions`);
      await page.getByLabel('Operator key').fill(s1.key);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('navigation', { name: 'Pages' }).waitFor();
      const cookie = (await context.cookies()).find((c) => c.name === 'warren_session');
      assert.ok(cookie?.httpOnly, 'an HttpOnly session cookie');
      await s1.stop();

      // What is stored: the hash of the cookie's token, never the token.
      const store = await Store.open(
        target.kind === 'sqlite' ? { url: db, durability: 'process' } : { ...loc },
        systemClock,
        createIds(systemClock),
      );
      try {
        const rows = await store.reader.selectFrom('ui_sessions').selectAll().execute();
        assert.equal(rows.length, 1);
        assert.equal(rows[0]?.token_hash, createHash('sha256').update(cookie.value).digest('hex'));
        assert.ok(!JSON.stringify(rows).includes(cookie.value), 'the token itself is not stored');
        assert.ok((rows[0]?.expires_at ?? 0) > Date.now(), 'with an expiry');
      } finally {
        await store.close();
      }

      // A new server process on the same database (another port: cookies ignore ports).
      const s2 = await startServer({ dataDir, db });
      servers.push(s2);
      await page.goto(`${s2.url}/sessions`);
      await page.getByRole('navigation', { name: 'Pages' }).waitFor();
      assert.equal(await page.getByLabel('Operator key').count(), 0, 'no login asked for');
      await page.getByTestId('live-status').getByText('● live').waitFor();
      // A state-changing request with the old cookie works on the new server too.
      await page.getByRole('link', { name: 'Coordination' }).click();
      await page.getByLabel('Room name').fill('after-restart');
      await page.getByRole('button', { name: 'Create room' }).click();
      await page.locator('[data-stream="after-restart"]').waitFor();
      // Logging out deletes the row: the cookie is dead everywhere.
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByLabel('Operator key').waitFor();
      const me = await fetch(`${s2.url}/v1/ui/me`, { headers: { cookie: `warren_session=${cookie.value}` } });
      assert.equal(me.status, 401);
      await s2.stop();
    } finally {
      await context.close();
    }
  });
});
