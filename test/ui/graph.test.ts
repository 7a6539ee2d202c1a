/**
 * The Coordination graph at 300 sessions in a real chromium, 1280×800: every session is
 * found by search and then under the pointer as a link to its page, its label drawn at
 * ≥ 11 px (computed font size × the canvas zoom); zooming out stops at 11 px; a group and a
 * subtree collapse and search still reaches what they hide; clicks go to the session page
 * and to the room's drawer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { needs } from '../helpers/system-tools.ts';
import { CHROMIUM, type UiRig, uiRig } from './browser.ts';
import { populate, type Scene } from './scene-scale.ts';

const SESSIONS = 300;

/** A cell's label: its computed font size times the canvas zoom, and what is under its centre. */
function probe(page: Page, cell: string) {
  return page.evaluate((key) => {
    const el = document.querySelector(`[data-cell="${CSS.escape(key)}"] .cell-label`);
    const vp = document.querySelector('.react-flow__viewport');
    if (!el || !vp) return null;
    const zoom = new DOMMatrix(getComputedStyle(vp).transform).a;
    const r = el.getBoundingClientRect();
    const x = r.left + Math.min(r.width / 2, 20);
    const y = r.top + r.height / 2;
    const hit = document.elementFromPoint(x, y)?.closest('a,button');
    const inView = x >= 0 && y >= 0 && x <= window.innerWidth && y <= window.innerHeight;
    return {
      px: Number.parseFloat(getComputedStyle(el).fontSize) * zoom,
      href: hit?.getAttribute('href') ?? null,
      inView,
    };
  }, cell);
}

describe('web UI, the graph at 300 sessions', { timeout: 600_000, skip: needs(CHROMIUM) }, () => {
  let rig: UiRig;
  let scene: Scene;
  before(async () => {
    rig = await uiRig();
    scene = await populate(rig.server, { sessions: SESSIONS, rooms: 30, taskTrees: 10 });
  });
  after(async () => {
    await rig?.close();
  });

  const open = async (page: Page, by: 'task' | 'room' = 'task') => {
    await page.goto(`${rig.server.url}/coordination?view=graph`);
    await page.getByTestId('graph').waitFor();
    await page.getByRole('button', { name: `by ${by}` }).click();
    await page.locator('[data-cell]').first().waitFor();
  };
  const find = async (page: Page, text: string) => {
    const box = page.getByLabel('Find in graph');
    await box.fill(text);
    await box.press('Enter');
  };

  test('every session is found by search and is a link under the pointer, labels ≥ 11 px', async () => {
    assert.equal(scene.sessions.length, SESSIONS);
    await rig.withPage(async (page) => {
      await open(page);
      const missed: string[] = [];
      let smallest = Number.POSITIVE_INFINITY;
      for (const s of scene.sessions) {
        await find(page, s.id);
        const cell = page.locator(`[data-cell$="/session:${s.id}"]`).first();
        await cell.waitFor();
        const key = (await cell.getAttribute('data-cell')) as string;
        let p = await probe(page, key);
        // Centring happens on the next frame.
        for (let i = 0; i < 10 && !(p?.inView && p.href); i++) {
          await page.waitForTimeout(50);
          p = await probe(page, key);
        }
        if (!p?.inView || p.href !== `/sessions/${s.id}`)
          missed.push(`${s.title} ${s.id}: ${JSON.stringify(p)}`);
        else smallest = Math.min(smallest, p.px);
      }
      assert.deepEqual(missed, [], 'every session in view and clickable after a search');
      assert.ok(smallest >= 11, `labels at ≥ 11 px (smallest ${smallest})`);
    });
  });

  test('zooming out and fitting stop where labels are 11 px', async () => {
    await rig.withPage(async (page) => {
      await open(page);
      await page.getByRole('button', { name: 'fit view' }).click();
      const out = page.getByRole('button', { name: 'zoom out' });
      // It turns disabled at the smallest zoom allowed.
      for (let i = 0; i < 10 && (await out.isEnabled()); i++) await out.click();
      assert.equal(await out.isEnabled(), false, 'zoom out stops');
      await page.mouse.move(640, 450);
      for (let i = 0; i < 10; i++) await page.mouse.wheel(0, 400);
      await page.waitForTimeout(300);
      const sizes = await page.evaluate(() => {
        const vp = document.querySelector('.react-flow__viewport') as Element;
        const zoom = new DOMMatrix(getComputedStyle(vp).transform).a;
        return [...document.querySelectorAll('.cell-label')].map(
          (el) => Number.parseFloat(getComputedStyle(el).fontSize) * zoom,
        );
      });
      assert.ok(sizes.length > 20, `cells drawn (${sizes.length})`);
      assert.ok(Math.min(...sizes) >= 11, `smallest label ${Math.min(...sizes)} px`);
    });
  });

  test('groups and subtrees collapse; search reaches what they hide; clicks go through', async () => {
    const task = scene.tasks[0] as string;
    await rig.withPage(async (page) => {
      await open(page);
      const group = `task:${task}`;
      const before = await page.locator(`[data-cell^="${group}/session:"]`).count();
      assert.equal(before, 10, 'the task tree: its session, 3 workers, 6 leaves');
      await page.locator(`[data-cell="${group}"] .cell-toggle`).click();
      await page.locator(`[data-cell^="${group}/session:"]`).first().waitFor({ state: 'detached' });
      // A leaf of the collapsed tree: search expands the group and centres it.
      const tree = await rig.server.api<{ sessions: { id: string; parentId: string; title: string }[] }>(
        'GET',
        '/v1/sessions?limit=1000',
      );
      const lead = (await rig.server.api<{ task: { sessionId: string } }>('GET', `/v1/tasks/${task}`)).json
        .task.sessionId;
      const worker = tree.json.sessions.find((s) => s.parentId === lead) as { id: string };
      const leaf = tree.json.sessions.find((s) => s.parentId === worker.id) as { id: string };
      await find(page, leaf.id);
      await page.locator(`[data-cell="${group}/session:${leaf.id}"]`).waitFor();
      // A subtree: collapsing the worker hides its two leaves, and says how many.
      const workerCell = page.locator(`[data-cell="${group}/session:${worker.id}"]`);
      await workerCell.locator('.cell-toggle').click();
      await workerCell.getByText('▸ 2').waitFor();
      assert.equal(await page.locator(`[data-cell="${group}/session:${leaf.id}"]`).count(), 0);
      await find(page, leaf.id);
      await page.locator(`[data-cell="${group}/session:${leaf.id}"]`).waitFor();
      // Click through: the session's page, and a room's drawer.
      await page.locator(`[data-cell="${group}/session:${leaf.id}"] a`).click();
      await page.waitForURL(`**/sessions/${leaf.id}`);
      await open(page, 'room');
      const room = scene.rooms[0] as { id: string; name: string };
      await find(page, room.name);
      await page.locator(`[data-cell="room:${room.id}"] button.cell-label`).click();
      await page.waitForURL(`**/coordination?*stream=${room.id}*`);
      await page.getByTestId('transcript').waitFor();
    });
  });
});
