/**
 * The web UI's inbox and its quality bars in a real chromium against a real `warren serve`:
 * an escalation raised through the orchestration plugin answered from the page, keyboard
 * reachability, dark mode readable, no horizontal overflow at 1280×800, and a task's workpad
 * and findings on its page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { needs } from '../helpers/system-tools.ts';
import { CHROMIUM, LISTENER, type UiRig, uiRig } from './browser.ts';

/**
 * WCAG contrast of an element's text against the first opaque background behind it. Plain
 * source text, so the test runner's transform adds no helpers the page does not have.
 */
const CONTRAST = `(sel) => {
  const el = document.querySelector(sel);
  if (!el) throw new Error('no ' + sel);
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  let bgEl = el;
  let bg = 'rgb(255, 255, 255)';
  while (bgEl) {
    const c = getComputedStyle(bgEl).backgroundColor;
    const v = rgb(c);
    if (v.length === 3 || (v.length === 4 && v[3] > 0.9)) { bg = c; break; }
    bgEl = bgEl.parentElement;
  }
  const fg = getComputedStyle(el).color;
  const lum = (c) => {
    const [r, g, b] = rgb(c).map((x) => {
      const s = x / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  return { fg, bg, ratio: (hi + 0.05) / (lo + 0.05) };
}`;

function contrastOf(page: Page, selector: string): Promise<{ fg: string; bg: string; ratio: number }> {
  return page.evaluate(`(${CONTRAST})(${JSON.stringify(selector)})`);
}

describe('web UI, inbox and quality', { timeout: 120_000, skip: needs(CHROMIUM) }, () => {
  let rig: UiRig;
  const withPage = (fn: (page: Page) => Promise<void>) => rig.withPage(fn);

  before(async () => {
    rig = await uiRig();
  });
  after(async () => {
    await rig?.close();
  });

  test('an escalation from a task shows in the Inbox, is answered there, and the answer lands', async () => {
    const made = await rig.server.api<{ task: { id: string } }>('POST', '/v1/tasks', {
      title: 'needs-help',
      prompt: 'migrate',
      spawn: {
        script: {
          steps: [
            { call: { syscall: 'task_escalate', input: { question: 'Which database do I migrate?' } } },
            { wait: { match: '\\[ANSWER\\]', as: 'answer' } },
            { say: 'migrated: ${answer.text}' },
          ],
        },
      },
    });
    assert.equal(made.status, 200, JSON.stringify(made.json));
    const task = made.json.task.id;
    await withPage(async (page) => {
      await page.getByRole('link', { name: 'Inbox' }).click();
      const card = page.getByRole('article').filter({ hasText: 'Which database do I migrate?' });
      await card.waitFor();
      await card.getByLabel('Answer').fill('the staging one');
      await card.getByRole('button', { name: 'Answer' }).click();
      // The card stays (answered today), now saying the answer given.
      await card.getByTestId('answer').getByText('the staging one').waitFor();
      await page.getByText('Nothing waits for you.').waitFor();
    });
    const deadline = Date.now() + 15_000;
    let said = false;
    let answered: { payload: { answer?: string; delivered?: string } } | undefined;
    while (Date.now() < deadline && !(said && answered)) {
      const r = await rig.server.api<{
        events: { type: string; payload: { text?: string; answer?: string; task?: string } }[];
      }>('GET', '/v1/events?limit=1000');
      answered = r.json.events.find((e) => e.type === 'escalation.answered' && e.payload.task === task);
      said = r.json.events.some(
        (e) => e.type === 'session.output' && /migrated: .*the staging one/s.test(e.payload.text ?? ''),
      );
      if (!(said && answered)) await new Promise((res) => setTimeout(res, 200));
    }
    assert.equal(answered?.payload.answer, 'the staging one');
    assert.equal(answered?.payload.delivered, 'input');
    assert.ok(said, 'the asking session got the answer as input and carried on');
  });

  test('keyboard: Tab reaches a primary action, Enter and Space activate it, Escape closes the dialog', async () => {
    const r = await rig.server.api<{ session: { id: string } }>('POST', '/v1/sessions', {
      title: 'keyboard',
      script: LISTENER,
    });
    const id = r.json.session.id;
    await withPage(async (page) => {
      await page.goto(`${rig.server.url}/sessions/${id}`);
      await page.getByRole('button', { name: 'Kill', exact: true }).waitFor();
      const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
      const tabTo = async (label: string) => {
        for (let i = 0; i < 40; i++) {
          await page.keyboard.press('Tab');
          if ((await focused()) === label) return;
        }
        assert.fail(`Tab never reached ${label}`);
      };
      await tabTo('Kill (graceful)');
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await tabTo('Kill');
      await page.keyboard.press('Space');
      await dialog.waitFor();
      // Focus starts on Cancel; one Tab reaches Confirm, Enter confirms.
      await page.keyboard.press('Tab');
      assert.equal(await focused(), 'Confirm');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1 }).getByText('killed').waitFor();
    });
  });

  test('dark mode: the toggle changes the computed colours and text stays readable', async () => {
    await withPage(async (page) => {
      await page.emulateMedia({ colorScheme: 'light' });
      await page.getByRole('link', { name: 'Sessions' }).click();
      await page.locator('[data-list]').first().waitFor();
      const targets = ['body', 'header.top', '.muted', 'nav a', 'button'];
      const light = await Promise.all(targets.map((t) => contrastOf(page, t)));
      await page.getByRole('button', { name: 'Toggle dark mode' }).click();
      const dark = await Promise.all(targets.map((t) => contrastOf(page, t)));
      assert.notEqual(dark[0]?.bg, light[0]?.bg, 'the page background changes');
      assert.notEqual(dark[0]?.fg, light[0]?.fg, 'the text colour changes');
      for (const [i, t] of targets.entries()) {
        for (const [mode, c] of [
          ['light', light[i]],
          ['dark', dark[i]],
        ] as const)
          assert.ok(
            (c?.ratio ?? 0) >= 4.5,
            `${t} in ${mode}: ${c?.fg} on ${c?.bg} is ${c?.ratio.toFixed(2)}:1`,
          );
      }
    });
  });

  test("the theme follows the system's until chosen, and the choice survives a reload", async () => {
    await withPage(async (page) => {
      const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.reload();
      await page.getByRole('button', { name: 'Toggle dark mode' }).waitFor();
      assert.equal(await theme(), 'dark', 'a dark system starts dark');
      await page.getByRole('button', { name: 'Toggle dark mode' }).click();
      assert.equal(await theme(), 'light', 'one click turns it light');
      await page.reload();
      await page.getByRole('button', { name: 'Toggle dark mode' }).waitFor();
      assert.equal(await theme(), 'light', 'the choice outlives the reload on a dark system');
    });
  });

  test('at 1280×800 no page overflows horizontally', async () => {
    await rig.server.api('POST', '/v1/streams', {
      name: 'a-rather-long-room-name-that-should-not-push-the-layout-sideways-at-all',
    });
    const s = await rig.server.api<{ session: { id: string } }>('POST', '/v1/sessions', {
      title: 'layout',
      script: LISTENER,
    });
    await rig.server.api('POST', `/v1/sessions/${s.json.session.id}/send`, { text: 'x'.repeat(2000) });
    await withPage(async (page) => {
      for (const path of [
        '/',
        '/schedules',
        '/knowledge',
        '/coordination',
        '/sessions',
        `/sessions/${s.json.session.id}`,
        '/tasks',
        '/inbox',
        '/log',
      ]) {
        await page.goto(rig.server.url + path);
        await page.getByRole('navigation', { name: 'Pages' }).waitFor();
        await page.waitForTimeout(400);
        const w = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          client: document.documentElement.clientWidth,
        }));
        assert.ok(w.scroll <= w.client, `${path}: ${w.scroll}px wide in a ${w.client}px window`);
      }
    });
  });
  test("a task's page shows its workpad and findings, and a new finding without a reload", async () => {
    const made = await rig.server.api<{ task: { id: string } }>('POST', '/v1/tasks', {
      title: 'with-knowledge',
      prompt: 'look around',
      hold: true,
      spawn: { script: LISTENER },
    });
    assert.equal(made.status, 200, JSON.stringify(made.json));
    const task = made.json.task.id;
    const pad = await rig.server.api('POST', `/v1/tasks/${task}/workpad`, {
      body: 'plan: measure first',
      version: 0,
    });
    assert.equal(pad.status, 200, JSON.stringify(pad.json));
    const first = await rig.server.api('POST', '/v1/knowledge', {
      title: 'cold cache',
      body: 'first run is slow',
      task,
    });
    assert.equal(first.status, 200, JSON.stringify(first.json));
    await withPage(async (page) => {
      await page.goto(`${rig.server.url}/tasks/${task}`);
      const knowledge = page.getByRole('region', { name: 'Knowledge' });
      await knowledge.getByText('plan: measure first').waitFor();
      await knowledge.getByText('cold cache').waitFor();
      await rig.server.api('POST', '/v1/knowledge', {
        title: 'warm cache',
        body: 'second run is fast',
        task,
      });
      await knowledge.getByText('warm cache').waitFor();
      assert.equal(await knowledge.getByText('version 1').count(), 1);
    });
  });
});
