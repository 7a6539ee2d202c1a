/**
 * The live parts of the web UI in a real chromium against a real `warren serve`: the SSE
 * stream dropping and resuming by Last-Event-ID with no gap and no repeat, a session page's
 * turns updating live, a page refetching while its events keep coming, a crash joining the
 * header's count, and `/chat` (the operator's conversation with the root session).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { needs } from '../helpers/system-tools.ts';
import { CHROMIUM, type UiRig, uiRig } from './browser.ts';

describe('web UI, live', { timeout: 120_000, skip: needs(CHROMIUM) }, () => {
  let rig: UiRig;
  const withPage = (fn: (page: Page) => Promise<void>) => rig.withPage(fn);
  const spawn = (title: string) => rig.spawnListener(title);

  before(async () => {
    rig = await uiRig();
  });
  after(async () => {
    await rig?.close();
  });

  test('the live stream drops, shows reconnecting, and resumes by Last-Event-ID: no gap, no repeat', async () => {
    const room = await rig.server.api<{ stream: { id: string }; fd: number }>('POST', '/v1/streams', {
      name: 'resume',
    });
    const fd = room.json.fd;
    const write = (message: string) => rig.server.api('POST', `/v1/fds/${fd}/write`, { message });
    await withPage(async (page) => {
      const resumes: string[] = [];
      page.on('request', (r) => {
        const id = r.headers()['last-event-id'];
        if (r.url().includes('/v1/events/live') && id) resumes.push(id);
      });
      const context = page.context();
      try {
        await page.goto(`${rig.server.url}/coordination?stream=${room.json.stream.id}`);
        const status = page.getByTestId('live-status');
        await status.getByText('● live').waitFor();
        const transcript = page.getByTestId('transcript');
        await write('before 0');
        await transcript.getByText('before 0').waitFor();
        // The network goes away under the open stream; messages keep being written meanwhile.
        await context.setOffline(true);
        await status.getByText('reconnecting').waitFor();
        for (let i = 0; i < 5; i++) await write(`while ${i}`);
        await page.waitForTimeout(1500); // at least one failed retry while offline
        await context.setOffline(false);
        await status.getByText('● live').waitFor();
        for (let i = 0; i < 3; i++) await write(`after ${i}`);
        await transcript.getByText('after 2').waitFor();
        await page.waitForTimeout(500);
        const texts = await transcript.locator('.msg .text').allTextContents();
        assert.deepEqual(texts, [
          'before 0',
          'while 0',
          'while 1',
          'while 2',
          'while 3',
          'while 4',
          'after 0',
          'after 1',
          'after 2',
        ]);
        assert.ok(resumes.length > 0, 'the reconnect carries Last-Event-ID');
        assert.ok(Number(resumes[resumes.length - 1]) > 0);
      } finally {
        await context.setOffline(false).catch(() => {});
      }
    });
  });

  test('a session page shows its transcript as turns and a live update appears', async () => {
    const id = await spawn('talker');
    await rig.server.api('POST', `/v1/sessions/${id}/send`, { text: 'first' });
    await withPage(async (page) => {
      await page.goto(`${rig.server.url}/sessions/${id}`);
      const turns = page.getByTestId('turns');
      await turns.getByText(/^heard first$/).waitFor();
      const before = await turns.locator('.turn').count();
      assert.ok(before >= 2, `the spawn and the input are turns of their own (${before})`);
      await rig.server.api('POST', `/v1/sessions/${id}/send`, { text: 'second' });
      await turns.getByText(/^heard second$/).waitFor();
      assert.equal(await turns.locator('.turn').count(), before + 1, 'the new input opens one turn');
      assert.equal(await turns.getByText(/^heard first$/).count(), 1);
    });
  });

  test('a long session page opens on its latest page and loads older ones on demand, each event once', async () => {
    const id = await spawn('chatty');
    const N = 60; // about five events each: more than one page (200)
    for (let i = 0; i < N; i++) await rig.server.api('POST', `/v1/sessions/${id}/send`, { text: `m${i}` });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = await rig.server.api<{ events: { type: string; payload: { text?: string } }[] }>(
        'GET',
        `/v1/events?session=${id}&type=session.output&limit=1`,
      );
      if (/^heard m59$/.test(r.json.events[0]?.payload.text ?? '')) break;
      assert.ok(Date.now() < deadline, 'the session answered every input');
      await new Promise((res) => setTimeout(res, 200));
    }
    await withPage(async (page) => {
      await page.goto(`${rig.server.url}/sessions/${id}`);
      const turns = page.getByTestId('turns');
      await turns.getByText(/^heard m59$/).waitFor();
      assert.equal(await turns.getByText(/^heard m0$/).count(), 0, 'the oldest page is not loaded yet');
      const older = page.getByRole('button', { name: 'Load older' });
      for (let i = 0; i < 10 && (await older.count()) > 0; i++) {
        await older.click();
        await page.waitForTimeout(300);
      }
      await turns.getByText(/^heard m0$/).waitFor();
      assert.equal(await older.count(), 0, 'no more pages');
      assert.equal(await turns.locator('.turn-text').count(), N, 'every answer once');
      // Live still merges after paging.
      await rig.server.api('POST', `/v1/sessions/${id}/send`, { text: 'late' });
      await turns.getByText(/^heard late$/).waitFor();
      assert.equal(await turns.locator('.turn-text').count(), N + 1);
    });
  });

  test('a steady stream of events still refetches the page before the stream ends', async () => {
    await withPage(async (page) => {
      await page.goto(`${rig.server.url}/knowledge`);
      await page.getByTestId('live-status').getByText('● live').waitFor();
      await page.getByText('No findings.').waitFor();
      // One finding every ~100 ms for ~3 s, well inside the page's 300 ms refetch window: a
      // debounce restarted by each event would wait for the stream to stop.
      let shown = 0;
      for (let i = 0; i < 30 && shown === 0; i++) {
        const r = await rig.server.api('POST', '/v1/knowledge', {
          title: `steady ${i}`,
          body: 'one of many',
        });
        assert.equal(r.status, 200, JSON.stringify(r.json));
        await page.waitForTimeout(100);
        shown = await page.locator('[data-finding]').count();
      }
      assert.ok(shown > 0, 'the list refetched while the events kept coming');
    });
  });

  test('a session that crashes while the page is open joins the header count of bad ends', async () => {
    // Spawned before the page opens: no spawn event reloads what needs the operator meanwhile.
    const r = await rig.server.api<{ session: { id: string } }>('POST', '/v1/sessions', {
      title: 'crashes on cue',
      script: { steps: [{ wait: {} }, { exit: 'crashed' }] },
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    await withPage(async (page) => {
      await page.getByTestId('live-status').getByText('● live').waitFor();
      const bad = page.locator('[data-need="crashed or over budget"]');
      await bad.waitFor({ state: 'attached' });
      const before = Number((await bad.textContent())?.match(/\d+/)?.[0] ?? 0);
      await rig.server.api('POST', `/v1/sessions/${r.json.session.id}/send`, { text: 'crash' });
      // Its ending is read alone (the session list is not read again) and counted.
      await bad.filter({ hasText: String(before + 1) }).waitFor();
    });
  });

  test('/chat is the root session: the operator talks to it from the page', async () => {
    await withPage(async (page) => {
      await page.getByRole('link', { name: 'Chat' }).click();
      const heading = page.getByRole('heading', { level: 1 });
      await heading.waitFor();
      const root = await rig.server.api<{ task: { sessionId: string | null } }>('GET', '/v1/tasks/root');
      const sessions = await rig.server.api<{ sessions: { id: string; depth: number; status: string }[] }>(
        'GET',
        '/v1/sessions?limit=1000',
      );
      const top = sessions.json.sessions.filter((s) => s.depth === 1 && s.status !== 'stopped');
      const expected =
        root.json.task?.sessionId && root.json.task.sessionId !== 'init'
          ? root.json.task.sessionId
          : top[0]?.id;
      assert.ok(expected, 'a root session exists');
      await page.getByText(expected).first().waitFor();
      await page.getByLabel('Message to send').fill('hello root');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.getByTestId('turns').getByText('hello root').first().waitFor();
      const events = await rig.server.api<{ events: { type: string; payload: { text?: string } }[] }>(
        'GET',
        `/v1/events?session=${expected}&limit=200`,
      );
      assert.ok(
        events.json.events.some((e) => e.type === 'session.input' && /hello root/.test(e.payload.text ?? '')),
      );
    });
  });
});
