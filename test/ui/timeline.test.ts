/**
 * The timeline in a real chromium at 1280×800: a task whose session tree is 50 sessions
 * shows one lane per session on one screen, every label ≥ 11 px and in view, by both deep
 * links (/tasks/:id/timeline, /sessions/:id/timeline); a new input lands in its lane live.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { needs } from '../helpers/system-tools.ts';
import { CHROMIUM, type UiRig, uiRig } from './browser.ts';
import { TREE_50, waitForSessions } from './scene-scale.ts';

describe('web UI, the timeline', { timeout: 300_000, skip: needs(CHROMIUM) }, () => {
  let rig: UiRig;
  let task = '';
  let lead = '';
  let leaf = '';
  before(async () => {
    rig = await uiRig();
    const api = rig.server.api;
    await api('POST', '/v1/zone/limits', { maxDepth: 10, maxChildren: 1000, maxSessionsPerZone: 1000 });
    const t = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      title: 'wide',
      prompt: 'fan out',
      spawn: { script: TREE_50 },
    });
    assert.equal(t.status, 200, JSON.stringify(t.json));
    task = t.json.task.id;
    const live = await waitForSessions(rig.server, 50);
    lead = (await api<{ task: { sessionId: string } }>('GET', `/v1/tasks/${task}`)).json.task.sessionId;
    leaf = (live.find((s) => s.title === 'leaf') as { id: string }).id;
    await api('POST', `/v1/sessions/${leaf}/send`, { text: 'first' });
  });
  after(async () => {
    await rig?.close();
  });

  /** Lanes, and each label's size (computed font × the SVG's own scale) and whether it is in view. */
  const measure = (page: Page) =>
    page.evaluate(() => {
      const svg = document.querySelector('[data-testid="timeline"]') as SVGSVGElement;
      const scale = svg.getScreenCTM()?.a ?? 0;
      return [...svg.querySelectorAll('[data-lane]')].map((g) => {
        const label = g.querySelector('.tl-label a') as HTMLElement;
        const r = label.getBoundingClientRect();
        return {
          id: g.getAttribute('data-lane'),
          px: Number.parseFloat(getComputedStyle(label).fontSize) * scale,
          inView: r.top >= 0 && r.bottom <= window.innerHeight && r.width > 0 && r.left >= 0,
        };
      });
    });

  for (const link of ['task', 'session'] as const)
    test(`a tree of 50 fits one screen with labels ≥ 11 px (/${link}s/:id/timeline)`, async () => {
      await rig.withPage(async (page) => {
        await page.goto(`${rig.server.url}/${link}s/${link === 'task' ? task : lead}/timeline`);
        await page.locator('[data-lane]').nth(49).waitFor();
        const lanes = await measure(page);
        assert.equal(lanes.length, 50, 'one lane per session');
        assert.equal(lanes[0]?.id, lead, 'the root first');
        const bad = lanes.filter((l) => !l.inView || l.px < 11);
        assert.deepEqual(bad, [], 'every label in view at ≥ 11 px');
        const scrolls = await page.evaluate(
          () => document.scrollingElement!.scrollHeight > window.innerHeight,
        );
        assert.equal(scrolls, false, 'no page scroll');
      });
    });

  test('a new input shows in its lane live, and a label goes to the session', async () => {
    await rig.withPage(async (page) => {
      await page.goto(`${rig.server.url}/sessions/${lead}/timeline`);
      const lane = page.locator(`[data-lane="${leaf}"]`);
      await lane.waitFor();
      const before = await lane.locator('.tl-input').count();
      assert.ok(before >= 1, 'the earlier input is drawn');
      await rig.server.api('POST', `/v1/sessions/${leaf}/send`, { text: 'second' });
      await page.waitForFunction(
        ([sel, n]) => document.querySelectorAll(sel as string).length > (n as number),
        [`[data-lane="${leaf}"] .tl-input`, before] as const,
      );
      await lane.locator('.tl-label a').click();
      await page.waitForURL(`**/sessions/${leaf}`);
    });
  });
});
