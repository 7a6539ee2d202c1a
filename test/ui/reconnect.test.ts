/**
 * The live stream's reconnect cases in a real chromium against a real `warren serve`: a drop
 * before any event arrived still resumes from the server's position (messages written while
 * offline show), a page opened while warren is down recovers when it is back (no "cannot
 * reach warren" under `● live`), and an idle Coordination tab applies roster events as they
 * come instead of refetching the inventory (a byte count per event, not a wall time).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { needs } from '../helpers/system-tools.ts';
import { ARGS, CHROMIUM, ensureWebBuilt, LISTENER } from './browser.ts';

describe('web UI, reconnects', { timeout: 180_000, skip: needs(CHROMIUM) }, () => {
  let dataDir = '';
  let server: ServerProcess | undefined;
  let browser: Browser | undefined;

  before(async () => {
    ensureWebBuilt();
    dataDir = mkdtempSync(join(tmpdir(), 'warren-ui-reconnect-'));
    server = await startServer({ dataDir });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
  });
  after(async () => {
    await browser?.close().catch(() => {});
    await server?.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  });

  const s = () => server as ServerProcess;
  async function withPage(fn: (page: Page) => Promise<void>) {
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      await page.goto(`${s().url}/coordination`);
      await page.getByLabel('Operator key').fill(s().key);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('navigation', { name: 'Pages' }).waitFor();
      await fn(page);
    } finally {
      await context.setOffline(false).catch(() => {});
      await context.close();
    }
  }

  test('a drop before any event arrived resumes from the position the server opened at', async () => {
    const room = await s().api<{ stream: { id: string }; fd: number }>('POST', '/v1/streams', {
      name: 'quiet',
    });
    const write = (message: string) => s().api('POST', `/v1/fds/${room.json.fd}/write`, { message });
    await withPage(async (page) => {
      const resumes: string[] = [];
      page.on('request', (r) => {
        const id = r.headers()['last-event-id'];
        if (r.url().includes('/v1/events/live') && id) resumes.push(id);
      });
      await page.goto(`${s().url}/coordination?stream=${room.json.stream.id}`);
      const status = page.getByTestId('live-status');
      await status.getByText('● live').waitFor();
      await page.getByTestId('transcript').waitFor();
      // No event has reached this tab: the drop comes before the first one.
      await page.context().setOffline(true);
      await status.getByText('reconnecting').waitFor();
      for (let i = 0; i < 3; i++) await write(`offline ${i}`);
      await page.waitForTimeout(1200); // a failed retry while offline
      await page.context().setOffline(false);
      await status.getByText('● live').waitFor();
      const transcript = page.getByTestId('transcript');
      await transcript.getByText('offline 2').waitFor({ timeout: 10_000 });
      assert.deepEqual(await transcript.locator('.msg .text').allTextContents(), [
        'offline 0',
        'offline 1',
        'offline 2',
      ]);
      assert.ok(resumes.length > 0 && Number(resumes[0]) > 0, `resumed with Last-Event-ID (${resumes})`);
    });
  });

  test('a page opened while warren is down recovers when it is back', async () => {
    // No live session: a restart then writes no session event that would refetch the page anyway.
    await withPage(async (page) => {
      const status = page.getByTestId('live-status');
      await status.getByText('● live').waitFor();
      const port = new URL(s().url).port;
      await s().stop();
      await status.getByText('reconnecting').waitFor();
      // Opened during the outage: its first load fails.
      await page.getByRole('link', { name: 'Sessions' }).click();
      await page.getByText('cannot reach warren').first().waitFor();
      server = await startServer({ dataDir, args: ['--port', port] });
      await status.getByText('● live').waitFor({ timeout: 20_000 });
      await page.locator('[data-session="init"]').waitFor();
      assert.equal(await page.getByText('cannot reach warren').count(), 0, 'no stale error under ● live');
      assert.equal(await page.getByText('Loading…').count(), 0, 'no stale Loading…');
    });
  });

  /** What one byte-count case does around the shared measure (bytes received per log event). */
  interface Idle {
    /** The page shows what the case follows, the stream is live. */
    open(page: Page): Promise<void>;
    /** What one load of what the page holds weighs: the cost a reload per event would pay. */
    reference(): Promise<number>;
    /** Writes the events, paced as an idle tab sees them, and waits until the page shows them. */
    drive(page: Page): Promise<void>;
    /** The fewest events the drive writes. */
    events: number;
  }

  const size = async (path: string) => JSON.stringify((await s().api('GET', path)).json).length;
  const ROOMY = { maxDepth: 10, maxChildren: 1000, maxSessionsPerZone: 1000 };
  /** Listening sessions until the list holds `n` (the tests before may have made some). */
  async function fill(n: number) {
    const listed = async () =>
      (await s().api<{ sessions: unknown[] }>('GET', '/v1/sessions?limit=1000')).json.sessions.length;
    for (let i = await listed(); i < n; i++)
      await s().api('POST', '/v1/sessions', { title: `idle ${i}`, script: LISTENER });
  }

  /** `n` things made one after the other (`make(i)` returns its id): their ids. */
  async function made(n: number, make: (i: number) => Promise<string>): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await make(i));
    return ids;
  }

  // An event's SSE frame is a few hundred bytes; a reload per event would be the whole of what
  // the page holds: each case bounds the bytes per event and checks that holding is big enough to tell.
  const idleTabs: { title: string; bound: number; what: string; prepare(): Promise<Idle> }[] = [
    {
      title:
        'an idle Coordination tab applies roster events: bytes per event stay small whatever the inventory',
      bound: 2_000,
      what: 'inventory',
      async prepare() {
        const N = 120;
        for (let i = 0; i < N; i++)
          await s().api('POST', '/v1/sessions', { title: `idle ${i}`, script: LISTENER });
        await s().api('POST', '/v1/streams', { name: 'lobby' });
        const ROOMS = 8;
        return {
          events: ROOMS * 2,
          async open(page) {
            await page.getByTestId('live-status').getByText('● live').waitFor();
            await page.getByText(/\d+ streams/).waitFor();
            await page.locator('[data-stream="lobby"]').waitFor();
          },
          reference: async () =>
            (
              await Promise.all(
                [
                  '/v1/streams?internal=true&limit=1000',
                  '/v1/sessions?limit=1000',
                  '/v1/tasks?limit=1000',
                ].map(size),
              )
            ).reduce((a, b) => a + b, 0),
          async drive(page) {
            for (let i = 0; i < ROOMS; i++) {
              await s().api('POST', '/v1/streams', { name: `late-${i}` });
              await page.waitForTimeout(250); // each lands in its own batch, as an idle tab sees them
            }
            await page.locator(`[data-stream="late-${ROOMS - 1}"]`).waitFor();
            const spawned = await s().api<{ session: { id: string } }>('POST', '/v1/sessions', {
              title: 'newcomer',
              script: LISTENER,
            });
            await page.getByText(`${N + 1} live sessions`).waitFor(); // N and the newcomer
            assert.ok(spawned.status === 200);
          },
        };
      },
    },
    {
      title: 'an idle Sessions tab reads only the sessions that changed: bytes per event stay small',
      bound: 2_000,
      what: 'list',
      async prepare() {
        // A list big enough that reading it again per event would show.
        await fill(120);
        const watched = await made(5, async (i) => {
          const r = await s().api<{ session: { id: string } }>('POST', '/v1/sessions', {
            title: `watched ${i}`,
            script: LISTENER,
          });
          return r.json.session.id;
        });
        return {
          events: watched.length * 2,
          async open(page) {
            // The view shows the five; the page holds (and would refetch) the whole list.
            await page.goto(`${s().url}/sessions?q=watched`);
            await page.getByTestId('live-status').getByText('● live').waitFor();
            for (const id of watched) await page.locator(`[data-session="${id}"]`).waitFor();
          },
          reference: () => size('/v1/sessions?all=true&limit=1000'),
          async drive(page) {
            for (const [i, id] of watched.entries()) {
              await s().api('POST', `/v1/sessions/${id}/send`, { text: `ping-${i}` });
              await page.waitForTimeout(300); // each turn in its own window, as an idle tab sees them
            }
            // Each row shows its session's answer: the page follows without reading the list again.
            for (const [i, id] of watched.entries())
              await page.locator(`[data-session="${id}"]`).getByText(`heard ping-${i}`).waitFor();
          },
        };
      },
    },
    {
      title: 'an idle Tasks tab reads only the tasks that changed: bytes per event stay small',
      bound: 4_000,
      what: 'lists',
      async prepare() {
        // The page loads every task and every session (their usage): big enough to tell a reload.
        await fill(120);
        const tracked = await made(4, async (i) => {
          const r = await s().api<{ task: { id: string } }>('POST', '/v1/tasks', {
            title: `tracked ${i}`,
            prompt: 'wait',
            held: true,
            spawn: { script: LISTENER },
          });
          return r.json.task.id;
        });
        return {
          events: tracked.length,
          async open(page) {
            await page.goto(`${s().url}/tasks?q=tracked`);
            await page.getByTestId('live-status').getByText('● live').waitFor();
            for (const id of tracked) await page.locator(`[data-task="${id}"]`).waitFor();
          },
          reference: async () =>
            (await size('/v1/tasks?limit=1000')) + (await size('/v1/sessions?all=true&limit=1000')),
          async drive(page) {
            for (const id of tracked) {
              await s().api('POST', `/v1/tasks/${id}/cancel`, {});
              await page.waitForTimeout(350); // each in its own window, as an idle tab sees them
            }
            // Each row shows its new state: the page follows without reading the lists again.
            for (const id of tracked)
              await page.locator(`[data-task="${id}"]`).locator('[data-state="cancelled"]').waitFor();
          },
        };
      },
    },
  ];

  for (const tab of idleTabs)
    test(tab.title, async () => {
      await s().api('POST', '/v1/zone/limits', ROOMY);
      const idle = await tab.prepare();
      await withPage(async (page) => {
        await idle.open(page);
        // The header's counts load beside the page (every session, on a loaded machine after
        // the page's own list): the window starts once they have, or their load is counted.
        await page.locator('[data-testid="needs-count"][data-loaded="true"]').waitFor();
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Network.enable');
        let bytes = 0;
        cdp.on('Network.dataReceived', (e: { encodedDataLength: number; dataLength: number }) => {
          bytes += Math.max(e.encodedDataLength, e.dataLength);
        });
        const reference = await idle.reference();
        const seqBefore = await head();
        await idle.drive(page);
        await page.waitForTimeout(500);
        const events = (await head()) - seqBefore;
        await cdp.detach();
        assert.ok(events >= idle.events, `events in the window: ${events}`);
        const perEvent = bytes / events;
        assert.ok(
          perEvent < tab.bound,
          `${bytes} B over ${events} events (${Math.round(perEvent)} B/event; one load of the ${tab.what} is ${reference} B)`,
        );
        assert.ok(reference > 20 * tab.bound, `the ${tab.what} is big enough to tell (${reference} B)`);
      });
    });

  async function head(): Promise<number> {
    const r = await s().api<{ events: { seq: number }[] }>('GET', '/v1/events?limit=1');
    return r.json.events[0]?.seq ?? 0;
  }
});
