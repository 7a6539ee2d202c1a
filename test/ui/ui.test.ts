/**
 * The web UI in a real browser (Debian's chromium via playwright-core) against a real
 * `warren serve` process and the real CLI: login, the live Coordination tab, the drawer's
 * seam, the roster, session actions landing in the log, and the Origin check.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { binEnv, WARREN_BIN } from '../helpers/server.ts';
import { needs } from '../helpers/system-tools.ts';
import { CHROMIUM, type UiRig, uiRig } from './browser.ts';

describe('web UI', { timeout: 120_000, skip: needs(CHROMIUM) }, () => {
  let rig: UiRig;
  const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_')));
  const cli = (...args: string[]) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [WARREN_BIN, ...args, '--url', rig.server.url, '--data-dir', rig.dataDir],
        { env: { ...cleanEnv, ...binEnv() }, timeout: 20_000 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
    });
  const spawn = (title: string) => rig.spawnListener(title);
  const withPage = (fn: (page: Page) => Promise<void>) => rig.withPage(fn);

  before(async () => {
    rig = await uiRig();
  });
  after(async () => {
    await rig?.close();
  });

  test('login by key, by the one-time link (once), and logout', async () => {
    await withPage(async (page) => {
      await page.getByText('● live').waitFor();
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByLabel('Operator key').waitFor();
    });
    const link = /one-time login link: (\S+)\)/.exec(rig.server.output())?.[1];
    assert.ok(link, 'warren serve prints a login link');
    const context = await rig.browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(link);
      await page.getByRole('navigation', { name: 'Pages' }).waitFor({ timeout: 10_000 });
      assert.doesNotMatch(page.url(), /token=/, 'the token leaves the address bar');
      const again = await context.newPage();
      await context.clearCookies();
      await again.goto(link);
      await again.getByText('already used').waitFor({ timeout: 10_000 });
    } finally {
      await context.close();
    }
  });

  test('a room created through the CLI appears in the list and the graph without a reload', async () => {
    await withPage(async (page) => {
      await page.getByText('● live').waitFor();
      await cli('streams', 'create', 'cli-room');
      await page.locator('[data-stream="cli-room"]').waitFor();
      await page.getByRole('button', { name: 'Graph' }).click();
      await page.getByTestId('graph').getByText('# cli-room').waitFor();
      await cli('streams', 'create', 'cli-room-2');
      await page.getByTestId('graph').getByText('# cli-room-2').waitFor();
    });
  });

  test('Show internals reveals stdin: and pipe: streams', async () => {
    const id = await spawn('plumbed');
    await withPage(async (page) => {
      await page.getByText('● live').waitFor();
      const stdin = page.locator(`[data-stream="stdin:${id}"]`);
      await page.getByText('streams ·').waitFor();
      assert.equal(await stdin.count(), 0, 'internals hidden by default');
      await page.getByLabel('Show internals').check();
      await stdin.waitFor();
      await page.getByLabel('Show internals').uncheck();
      await stdin.waitFor({ state: 'detached' });
    });
  });

  test('the drawer shows scrollback, then a message written after it opened, exactly once', async () => {
    const room = await rig.server.api<{ stream: { id: string }; fd: number }>('POST', '/v1/streams', {
      name: 'seam',
    });
    const fd = room.json.fd;
    for (let i = 0; i < 3; i++) await rig.server.api('POST', `/v1/fds/${fd}/write`, { message: `old ${i}` });
    await withPage(async (page) => {
      await page.getByText('● live').waitFor();
      await page.locator('[data-stream="seam"]').click();
      const transcript = page.getByTestId('transcript');
      await transcript.getByText('old 2').waitFor();
      await rig.server.api('POST', `/v1/fds/${fd}/write`, { message: 'fresh one' });
      await transcript.getByText('fresh one').waitFor();
      await page.waitForTimeout(500);
      assert.equal(await transcript.getByText('fresh one').count(), 1);
      for (let i = 0; i < 3; i++) assert.equal(await transcript.getByText(`old ${i}`).count(), 1);
      // Posting from the drawer as the operator (the room's owner) lands too, once.
      await page.getByLabel('Message').fill('from the browser');
      await page.getByRole('button', { name: 'Post' }).click();
      await transcript.getByText('from the browser').waitFor();
      assert.equal(await transcript.getByText('from the browser').count(), 1);
    });
  });

  test('the roster changes live when an agent joins and leaves', async () => {
    const id = await spawn('joiner');
    await rig.server.api('POST', '/v1/streams', { name: 'roster-room' });
    await withPage(async (page) => {
      await page.getByText('● live').waitFor();
      await page.locator('[data-stream="roster-room"]').click();
      const member = page.getByTestId('roster').locator(`[data-holder="${id}"]`);
      await page.getByTestId('roster').getByText('Members (1)').waitFor();
      await cli('streams', 'attach', id, 'roster-room');
      await member.waitFor();
      await cli('streams', 'detach', id, 'roster-room');
      await member.waitFor({ state: 'detached' });
      // And from the page: attach through the form, detach with the button.
      await page.getByLabel('Session to attach').selectOption(id);
      await page.getByRole('button', { name: 'Attach' }).click();
      await member.waitFor();
      await member.getByRole('button', { name: 'Detach' }).click();
      await member.waitFor({ state: 'detached' });
    });
  });

  test('sending a message and killing a session from the Sessions page land in the log', async () => {
    const id = await spawn('victim');
    await withPage(async (page) => {
      await page.getByRole('link', { name: 'Sessions' }).click();
      await page.locator(`[data-session="${id}"]`).click();
      await page.getByLabel('Message to send').fill('hello from the ui');
      // A message goes at once; a kill asks first.
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.getByRole('button', { name: 'Kill', exact: true }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
      await page.locator(`[data-session="${id}"]`).getByText('killed').waitFor();
      await page.getByRole('link', { name: 'Log' }).click();
      await page.getByLabel('Session', { exact: true }).fill(id);
      await page.getByRole('button', { name: 'Apply' }).click();
      const log = page.locator('[data-list="Events"]');
      await log.getByText('hello from the ui').first().waitFor();
      await log.locator('[data-type="session.status"]').getByText('"to":"stopped"').waitFor();
    });
    const events = await rig.server.api<{
      events: { type: string; actor: string; payload: { text?: string } }[];
    }>('GET', `/v1/events?session=${id}&limit=100`);
    const input = events.json.events.find((e) => e.type === 'session.input');
    assert.match(input?.payload.text ?? '', /hello from the ui/);
  });

  test('the session cookie is refused from another Origin', async () => {
    const login = await fetch(`${rig.server.url}/v1/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: rig.server.key }),
    });
    assert.equal(login.status, 200);
    const setCookie = login.headers.get('set-cookie') ?? '';
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Strict/);
    const cookie = setCookie.split(';')[0] as string;
    const post = (origin: string | null) =>
      fetch(`${rig.server.url}/v1/streams`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie,
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify({ name: `origin-${Math.random().toString(36).slice(2, 8)}` }),
      });
    const evil = await post('http://evil.example');
    assert.equal(evil.status, 403);
    assert.equal(((await evil.json()) as { error: { code: string } }).error.code, 'forbidden');
    assert.equal((await post(null)).status, 403, 'no Origin at all is refused too');
    assert.equal((await post(rig.server.url)).status, 200, 'its own origin is allowed');
    // A page of another origin, in the browser, cannot use it either.
    const other = await fetch(`${rig.server.url}/v1/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: JSON.stringify({ key: rig.server.key }),
    });
    assert.equal(other.status, 403, 'cross-origin login refused');
    // Logout ends the cookie session.
    const out = await fetch(`${rig.server.url}/v1/ui/logout`, {
      method: 'POST',
      headers: { cookie, origin: rig.server.url },
    });
    assert.equal(out.status, 200);
    const me = await fetch(`${rig.server.url}/v1/ui/me`, { headers: { cookie } });
    assert.equal(me.status, 401);
  });

  test('a server error is shown as its typed message, not a blank page', async () => {
    await withPage(async (page) => {
      await page.goto(`${rig.server.url}/sessions/ses_nope`);
      await page.getByRole('alert').getByText('does not exist').first().waitFor();
    });
  });
});
