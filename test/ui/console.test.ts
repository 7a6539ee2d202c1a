/**
 * The operator console (issue 29, part 1) in a real chromium against a real `warren serve`
 * populated by scene.ts: what needs me, truthful states, a readable transcript, actions,
 * the Schedules and Knowledge pages, search/filter/sort and deep links, the keyboard, and the
 * layout bugs the issue names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { needs } from '../helpers/system-tools.ts';
import { CHROMIUM, type UiRig, uiRig } from './browser.ts';
import { populate, type Scene, until } from './scene.ts';

type Api = UiRig['server']['api'];

const statusOf = async (api: Api, path: string, key: 'task' | 'session' | 'schedule') =>
  ((await api<Record<string, { status?: string; enabled?: boolean }>>('GET', path)).json[key] ?? {}) as {
    status?: string;
    enabled?: boolean;
    endReason?: string;
  };

describe('web UI, the operator console', { timeout: 240_000, skip: needs(CHROMIUM) }, () => {
  let rig: UiRig;
  let scene: Scene;
  const withPage = (fn: (page: Page) => Promise<void>) => rig.withPage(fn);
  const go = async (page: Page, path: string) => {
    await page.goto(rig.server.url + path);
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
  };

  before(async () => {
    rig = await uiRig();
    scene = await populate(rig.server.api, rig.dataDir);
  });
  after(async () => {
    await rig?.close();
  });

  test('states: each is its own glyph and word, from status and end reason; subtree usage beside each', async () => {
    await rig.server.api('POST', `/v1/sessions/${scene.acp}/kill`, {});
    await withPage(async (page) => {
      await go(page, '/sessions');
      const state = (id: string) => page.locator(`[data-session="${id}"] [data-state]`);
      const want: [string, string][] = [
        [scene.crashed, 'crashed'],
        [scene.overBudget, 'budget-exceeded'],
        [scene.stuck, 'running'],
        [scene.lead, 'idle'],
        [scene.acp, 'killed'],
      ];
      const glyphs = new Set<string>();
      for (const [id, st] of want) {
        await until(`${st} shown`, async () => (await state(id).getAttribute('data-state')) === st);
        const text = (await state(id).textContent())?.trim() ?? '';
        assert.ok(text.endsWith(st), `the word ${st} is written: ${text}`);
        glyphs.add(text.split(' ')[0] as string);
      }
      assert.equal(glyphs.size, want.length, `one glyph per state: ${[...glyphs].join(' ')}`);
      // The escalated task's session waits on the operator.
      const waiting = page.locator('[data-state="waiting"]');
      await waiting.first().waitFor();
      // Subtree usage beside the session: tokens and cost, on one line.
      const usage = page.locator(`[data-session="${scene.overBudget}"] [data-usage]`);
      assert.match((await usage.textContent()) ?? '', /15\.4k tok · \$0\.05/);
      // The session page says why it ended.
      await go(page, `/sessions/${scene.overBudget}`);
      await page.getByText('ended: budget_exceeded').waitFor();
      await page
        .getByText(/budget is spent/)
        .first()
        .waitFor();
    });
  });

  test('what needs me: counts in the header, an escalation answered in place with its context, bad ends, stuck, review', async () => {
    await withPage(async (page) => {
      await go(page, '/?stuck=0.02');
      const count = (label: string) => page.locator(`[data-need="${label}"]`);
      await until(
        'header counts',
        async () => (await count('open questions').textContent())?.includes('1') ?? false,
      );
      assert.match((await count('crashed or over budget').textContent()) ?? '', /3/);
      assert.match((await count('in review').textContent()) ?? '', /1/);
      const home = page.getByRole('region', { name: 'What needs you' });
      // Bad ends and the stuck agent, by threshold from the address.
      const failed = home.getByRole('region', { name: 'Failed sessions' });
      await failed.locator(`[data-session="${scene.crashed}"]`).waitFor();
      await failed.locator(`[data-session="${scene.overBudget}"]`).waitFor();
      const stuck = home.getByRole('region', { name: 'Stuck sessions' });
      await stuck.locator(`[data-session="${scene.stuck}"]`).waitFor();
      // The escalation with its files and options; an option answers it.
      const card = home.getByRole('article').filter({ hasText: 'Which database do I migrate first?' });
      await card.getByText('db/migrate.sql').waitFor();
      await card.getByRole('button', { name: 'production' }).waitFor();
      await card.getByRole('button', { name: 'staging' }).click();
      await home.getByText(/answered today/).click();
      await home.getByTestId('answer').getByText('staging').waitFor();
      await until('the header count drops', async () =>
        /\b0\b/.test((await count('open questions').textContent()) ?? ''),
      );
      // The inbox shows the answer too.
      await go(page, '/inbox');
      await page.getByTestId('answer').getByText('staging').waitFor();
      // Approving the task in review, from the home view.
      await go(page, '/');
      const review = page.locator(`[data-task="${scene.tasks.review}"]`);
      await review.getByRole('button', { name: 'Approve' }).click();
      await until('the task completes', async () => {
        const t = await statusOf(rig.server.api, `/v1/tasks/${scene.tasks.review}`, 'task');
        return t.status === 'complete';
      });
      await review.waitFor({ state: 'detached' });
      // The default threshold (10 min) does not call a 10-second-old sleep stuck.
      await go(page, '/');
      await page.getByRole('region', { name: 'Stuck sessions' }).getByText('Stuck').waitFor();
      assert.equal(await page.locator(`[data-session="${scene.stuck}"]`).count(), 0);
    });
    await until('the answer reached the asking session', async () => {
      const r = await rig.server.api<{ events: { payload: { text?: string } }[] }>(
        'GET',
        '/v1/events?type=session.output&limit=1000',
      );
      return r.json.events.some((e) => /^migrating .*staging/s.test(e.payload.text ?? ''));
    });
  });

  test('transcript: turns, a tool call collapsed with its input and result, plumbing only under Show internals', async () => {
    await withPage(async (page) => {
      await go(page, `/sessions/${scene.acp}`);
      const turns = page.getByTestId('turns');
      await turns.getByText('prompt').first().waitFor();
      const tool = turns.locator('details.turn-tool').first();
      await tool.waitFor();
      assert.equal(await tool.evaluate((d) => (d as HTMLDetailsElement).open), false, 'collapsed');
      await tool.locator('summary').click();
      await tool.getByText('input').waitFor();
      await tool.getByText('result').waitFor();
      assert.equal(await turns.locator('[data-internal]').count(), 0, 'no plumbing by default');
      assert.equal(await turns.getByText('fd.opened').count(), 0);
      await page.getByLabel('Show internals').check();
      await turns.getByText('fd.opened').first().waitFor();
      assert.ok((await turns.locator('[data-internal]').count()) > 0);
    });
  });

  test('transcript: long JSON stays in its card; it follows new turns unless scrolled up; Send needs no confirmation', async () => {
    const id = await rig.spawnListener('talker');
    await withPage(async (page) => {
      await go(page, `/sessions/${id}?internals=1`);
      const box = page.getByLabel('Message to send');
      await box.fill(`{"blob":"${'x'.repeat(3000)}"}`);
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      assert.equal(await page.getByRole('dialog').count(), 0, 'no confirmation for a message');
      await page
        .getByTestId('turns')
        .getByText(/^heard \{"blob/)
        .waitFor();
      const over = await page.evaluate(
        () =>
          [...document.querySelectorAll<HTMLElement>('.turn')].filter(
            (t) => t.scrollWidth > t.clientWidth + 1,
          ).length,
      );
      assert.equal(over, 0, 'no turn is wider than its card');
      // Enough turns to scroll, then follow.
      for (let i = 0; i < 12; i++)
        await rig.server.api('POST', `/v1/sessions/${id}/send`, { text: `line ${i}` });
      await page.getByTestId('turns').getByText('heard line 11').waitFor();
      const gap = () =>
        page.evaluate(() => {
          const m = document.querySelector('main') as HTMLElement;
          return m.scrollHeight - m.scrollTop - m.clientHeight;
        });
      await until('at the bottom', async () => (await gap()) < 60);
      await rig.server.api('POST', `/v1/sessions/${id}/send`, { text: 'newest' });
      await page.getByTestId('turns').getByText('heard newest').waitFor();
      await until('still at the bottom', async () => (await gap()) < 60);
      // Scrolled up: a new turn does not pull the reader down.
      await page.evaluate(() => {
        (document.querySelector('main') as HTMLElement).scrollTop = 0;
      });
      await page.waitForTimeout(100);
      await rig.server.api('POST', `/v1/sessions/${id}/send`, { text: 'while reading' });
      await page.getByTestId('turns').getByText('heard while reading').waitFor();
      await page.waitForTimeout(200);
      assert.equal(await page.evaluate(() => (document.querySelector('main') as HTMLElement).scrollTop), 0);
    });
  });

  test('a kill asks first and says how many sessions it stops', async () => {
    await withPage(async (page) => {
      await go(page, `/sessions/${scene.lead}`);
      await page.getByRole('button', { name: 'Kill', exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText('This stops 3 sessions: it and 2 below it.').waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('button', { name: 'Kill (graceful)' }).click();
      // SIGTERM hands its children on (reparent, the default): it alone stops.
      await dialog.getByText('This stops 1 session.').waitFor();
      await page.keyboard.press('Escape');
    });
  });

  test('tasks: start a held one, retry a failed one, cancel with a confirmation; the list searches, filters and sorts', async () => {
    const api = rig.server.api;
    await withPage(async (page) => {
      await go(page, '/tasks');
      await page.getByLabel('Search tasks').fill('flaky');
      const rows = page.locator('[data-task]');
      await until('one row', async () => (await rows.count()) === 1);
      await rows.first().getByRole('button', { name: 'Retry' }).click();
      // A second attempt, not a status: the retried script crashes again, and may do so between polls.
      await until('retried', async () => {
        const t = await api<{ task: { attempts: number } }>('GET', `/v1/tasks/${scene.tasks.failed}`);
        return t.json.task.attempts >= 2;
      });
      assert.match(page.url(), /q=flaky/, 'the search is in the address');
      await go(page, '/tasks?f=pending');
      await page.locator(`[data-task="${scene.tasks.held}"]`).getByRole('button', { name: 'Start' }).click();
      await until(
        'started',
        async () => (await statusOf(api, `/v1/tasks/${scene.tasks.held}`, 'task')).status !== 'pending',
      );
      await go(page, `/tasks/${scene.tasks.held}`);
      await page.getByRole('button', { name: 'Cancel task' }).click();
      await page
        .getByRole('dialog')
        .getByText(/open tasks below it/)
        .waitFor();
      await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
      await until(
        'cancelled',
        async () => (await statusOf(api, `/v1/tasks/${scene.tasks.held}`, 'task')).status === 'cancelled',
      );
      await page.getByRole('heading', { level: 1 }).getByText('cancelled').waitFor();
      // Sorting by title puts "flaky import" before "map the API".
      await go(page, '/tasks?sort=title');
      const titles = await page.locator('[data-task] a').allTextContents();
      assert.deepEqual(
        titles,
        [...titles].sort((a, b) => a.localeCompare(b)),
      );
    });
  });

  test('schedules: pause, resume and run now; a schedule has a link of its own', async () => {
    const api = rig.server.api;
    await withPage(async (page) => {
      await go(page, `/schedules/${scene.schedules.nightly}`);
      const row = page.locator('[data-schedule="nightly-report"]');
      await row.getByRole('button', { name: 'Pause' }).click();
      await until(
        'paused',
        async () =>
          (await statusOf(api, `/v1/schedules/${scene.schedules.nightly}`, 'schedule')).enabled === false,
      );
      await row.getByRole('button', { name: 'Resume' }).click();
      await until(
        'resumed',
        async () =>
          (await statusOf(api, `/v1/schedules/${scene.schedules.nightly}`, 'schedule')).enabled === true,
      );
      await row.getByRole('button', { name: 'Run now' }).click();
      await page.getByRole('region', { name: 'Fires' }).getByText('manual').waitFor();
      await page.getByLabel('Filter schedules').selectOption('paused');
      await page.locator('[data-schedule="hourly-sweep"]').waitFor();
      assert.equal(await page.locator('[data-schedule="nightly-report"]').count(), 0);
    });
  });

  test('knowledge: search by words, a finding has a link of its own', async () => {
    await withPage(async (page) => {
      await go(page, '/knowledge');
      await page.getByLabel('Search findings').fill('staging');
      await until('one finding', async () => (await page.locator('[data-finding]').count()) === 1);
      await go(page, `/knowledge/${scene.finding}`);
      await page
        .getByRole('article', { name: `Finding ${scene.finding}` })
        .getByText('Warm it in the deploy step.')
        .waitFor();
    });
  });

  test('an operator posts into a room an agent made, after joining it', async () => {
    const agentRoom = await rig.server.api<{ session: { id: string } }>('POST', '/v1/sessions', {
      title: 'room-maker',
      script: { steps: [{ create_stream: { name: 'agents-only', as: 'r' } }, { listen: {} }] },
    });
    assert.equal(agentRoom.status, 200);
    await withPage(async (page) => {
      await go(page, '/coordination?stream=agents-only');
      const drawer = page.getByTestId('drawer');
      await drawer.getByRole('button', { name: 'Join to post' }).click();
      await drawer.getByLabel('Message').fill('operator here');
      await drawer.getByRole('button', { name: 'Post' }).click();
      await drawer.getByTestId('transcript').getByText('operator here').waitFor();
    });
  });

  test('coordination: the stream list sorts by name, newest first or most members, kept in the address', async () => {
    // Made c, a, b in that order; c gets two members more, b one: each sort gives its own order.
    for (const name of ['sorted-c', 'sorted-a', 'sorted-b'])
      assert.equal((await rig.server.api('POST', '/v1/streams', { name })).status, 200);
    const members: string[] = [];
    for (let i = 0; i < 2; i++)
      members.push(
        (
          await rig.server.api<{ session: { id: string } }>('POST', '/v1/sessions', {
            title: `sorted member ${i}`,
            script: { steps: [{ listen: {} }] },
          })
        ).json.session.id,
      );
    const attach = async (stream: string, session: string) =>
      assert.equal(
        (
          await rig.server.api('POST', `/v1/streams/${stream}/attach`, {
            session,
            permission: 'rw',
            mode: 'detach',
          })
        ).status,
        200,
      );
    await attach('sorted-c', members[0] as string);
    await attach('sorted-c', members[1] as string);
    await attach('sorted-b', members[0] as string);
    await withPage(async (page) => {
      const order = () =>
        page
          .locator('[data-stream^="sorted-"]')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-stream')));
      await go(page, '/coordination?q=sorted-');
      await page.locator('[data-stream="sorted-c"]').waitFor();
      assert.deepEqual(await order(), ['sorted-a', 'sorted-b', 'sorted-c'], 'by name');
      await page.getByLabel('Sort streams').selectOption('newest');
      await page.waitForURL(/sort=newest/);
      assert.deepEqual(await order(), ['sorted-b', 'sorted-a', 'sorted-c'], 'newest first');
      // A link keeps the view.
      await go(page, '/coordination?q=sorted-&sort=members');
      await page.locator('[data-stream="sorted-c"]').waitFor();
      assert.deepEqual(await order(), ['sorted-c', 'sorted-b', 'sorted-a'], 'most members');
    });
  });

  test('keyboard: / focuses search, arrows move through a list, Escape closes the drawer', async () => {
    await withPage(async (page) => {
      await go(page, '/sessions');
      await page.locator('[data-session]').first().waitFor();
      await page.keyboard.press('/');
      assert.equal(
        await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
        'Search sessions',
      );
      await page.locator('[data-session]').first().focus();
      const first = await page.evaluate(() => document.activeElement?.getAttribute('data-session'));
      await page.keyboard.press('ArrowDown');
      const second = await page.evaluate(() =>
        (document.activeElement as HTMLElement | null)
          ?.closest('[data-session]')
          ?.getAttribute('data-session'),
      );
      assert.ok(second && second !== first, 'ArrowDown moved to the next row');
      await page.keyboard.press('ArrowUp');
      assert.equal(
        await page.evaluate(() =>
          (document.activeElement as HTMLElement | null)
            ?.closest('[data-session]')
            ?.getAttribute('data-session'),
        ),
        first,
      );
      await go(page, `/coordination?stream=${scene.room.id}`);
      await page.getByTestId('drawer').waitFor();
      await page.keyboard.press('Escape');
      await page.getByTestId('drawer').waitFor({ state: 'detached' });
      assert.doesNotMatch(page.url(), /stream=/);
    });
  });

  test('layout: the attach menu stays in the drawer, usage stays in its row, the Log shows actor and session apart', async () => {
    // A session with a very long title: the attach menu's widest option.
    await rig.server.api('POST', '/v1/sessions', {
      title: `a${'-very-long-title'.repeat(12)}`,
      script: { steps: [{ listen: {} }] },
    });
    await withPage(async (page) => {
      await go(page, `/coordination?stream=${scene.room.id}`);
      const drawer = await page.getByTestId('drawer').boundingBox();
      const menu = await page.getByLabel('Session to attach').boundingBox();
      assert.ok(
        drawer && menu && menu.x + menu.width <= drawer.x + drawer.width + 0.5,
        'the menu ends inside the drawer',
      );
      await go(page, '/sessions');
      await page.locator('[data-usage]').first().waitFor();
      const spill = await page.evaluate(
        () =>
          [...document.querySelectorAll<HTMLElement>('.vrow')].filter((r) => {
            const row = r.getBoundingClientRect();
            return [...r.querySelectorAll<HTMLElement>('[data-usage]')].some(
              (u) => u.getBoundingClientRect().bottom > row.bottom + 0.5,
            );
          }).length,
      );
      assert.equal(spill, 0, 'no usage text runs past its row');
      await go(page, '/log');
      await page.getByLabel('Session', { exact: true }).fill(scene.crashed);
      await page.getByRole('button', { name: 'Apply' }).click();
      // The operator spawned it: the actor is the operator, the session is the one spawned.
      const row = page.locator('.log-row[data-type="session.spawned"]').first();
      await row.waitFor();
      assert.equal(await row.locator('[data-col="actor"]').textContent(), 'operator:admin');
      assert.equal(await row.locator('[data-col="session"]').textContent(), scene.crashed);
    });
  });
});
