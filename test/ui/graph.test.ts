/**
 * The Coordination graph at 300 sessions in a real chromium, 1280×800: every session is
 * found by search and then under the pointer as a link to its page, its label drawn at
 * ≥ 11 px (computed font size × the canvas zoom) — all 300 through the find box in one page
 * evaluation, a sample of 10 by playwright's keyboard and mouse, clicked through; zooming out
 * stops at 11 px; a group and a subtree collapse and search still reaches what they hide;
 * clicks go to the session page and to the room's drawer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { needs } from '../helpers/system-tools.ts';
import { CHROMIUM, type UiRig, uiRig } from './browser.ts';
import { populate, type Scene } from './scene-scale.ts';

const SESSIONS = 300;

/**
 * A session's label: its computed font size times the canvas zoom, the point a click would use
 * and what is under it. Runs in the page (page.evaluate, and inside SWEEP).
 */
function probeSession(id: string) {
  const el = document.querySelector(`[data-cell$="/session:${CSS.escape(id)}"] .cell-label`);
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
    x,
    y,
  };
}
type Probe = ReturnType<typeof probeSession>;
const clickable = (p: Probe, id: string) => p?.inView === true && p.href === `/sessions/${id}`;

/**
 * In the page, in one evaluation. The find index (the `findable` the graph gives its search,
 * read from React's props on the find box's owner): each id's first match, the one Enter
 * opens, must be its session. Then a sweep that pans with the find box itself (its input and
 * Enter handlers, through events): an id not yet seen is searched, must come into view with
 * its session's link under its label within a bounded number of frames, and every session
 * whose label is then in view with its link under it counts as seen, with its label's size.
 * About ten searches so cover all 300, where a search for each took most of a minute.
 */
const SWEEP = `async (ids) => {
  const probe = ${probeSession.toString()};
  const clickable = ${clickable.toString()};
  const box = document.querySelector('input[aria-label="Find in graph"]');
  let owner = box[Object.keys(box).find((k) => k.startsWith('__reactFiber$'))];
  while (owner && !(owner.memoizedProps && owner.memoizedProps.findable)) owner = owner.return;
  const index = owner ? owner.memoizedProps.findable : [];
  const unindexed = ids.filter((id) => {
    const first = index.find((f) => f.text.includes(id.toLowerCase()));
    return !first || !first.id.endsWith('/session:' + id);
  });
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const seen = new Map();
  const missed = [];
  let searches = 0;
  for (const id of ids) {
    if (seen.has(id)) continue;
    searches++;
    setValue.call(box, id);
    box.dispatchEvent(new Event('input', { bubbles: true }));
    // React renders the matches after the event: Enter then opens the first.
    await new Promise((r) => setTimeout(r, 0));
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    let p = null;
    for (let i = 0; i < 30 && !clickable(p, id); i++) {
      await frame();
      p = probe(id);
    }
    if (!clickable(p, id)) missed.push(id + ': ' + JSON.stringify(p));
    for (const other of ids) {
      if (seen.has(other)) continue;
      const q = probe(other);
      if (clickable(q, other)) seen.set(other, q.px);
    }
  }
  return { indexed: index.length, unindexed, missed, seen: seen.size, searches, smallest: Math.min(...seen.values()) };
}`;

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

  test('every session is found by search and is a link under the pointer, labels ≥ 11 px', async (t) => {
    assert.equal(scene.sessions.length, SESSIONS);
    await rig.withPage(async (page) => {
      await open(page);
      const all = (await page.evaluate(`(${SWEEP})(${JSON.stringify(scene.sessions.map((s) => s.id))})`)) as {
        indexed: number;
        unindexed: string[];
        missed: string[];
        seen: number;
        searches: number;
        smallest: number;
      };
      const title = new Map(scene.sessions.map((s) => [s.id, s.title]));
      const named = (ids: string[]) => ids.map((m) => `${title.get(m.split(':')[0] as string)} ${m}`);
      assert.ok(all.indexed >= SESSIONS, `the find index read (${all.indexed} entries)`);
      assert.deepEqual(named(all.unindexed), [], 'every session is what a search for its id opens');
      assert.deepEqual(named(all.missed), [], 'every session searched comes into view, clickable');
      assert.equal(all.seen, SESSIONS, `every session in view and clickable (${all.searches} searches)`);
      assert.ok(all.smallest >= 11, `labels at ≥ 11 px (smallest ${all.smallest})`);
      t.diagnostic(`${all.searches} searches brought all ${SESSIONS} sessions into view`);
    });
  });

  test('a sample found with the keyboard and clicked with the mouse opens each session', async () => {
    // Spread over the list and the task trees' leaves (three deep), and the last one.
    const leaves = scene.sessions.filter((s) => s.title === 'leaf');
    const picks = [
      ...[0, 0.5, 1].map((f) => leaves[Math.round(f * (leaves.length - 1))]),
      ...Array.from({ length: 6 }, (_, k) => scene.sessions[Math.floor((k * SESSIONS) / 6)]),
      scene.sessions.at(-1),
    ] as { id: string; title: string }[];
    // A leaf can also be one of the list's picks (the scene's order varies): the next sessions fill in.
    const sample: { id: string; title: string }[] = [];
    for (const s of [...picks, ...scene.sessions])
      if (sample.length < 10 && !sample.some((x) => x.id === s.id)) sample.push(s);
    assert.equal(new Set(sample.map((s) => s.id)).size, 10, 'ten sessions');
    await rig.withPage(async (page) => {
      await open(page);
      for (const s of sample) {
        await find(page, s.id);
        await page.locator(`[data-cell$="/session:${s.id}"]`).first().waitFor();
        let p = await page.evaluate(probeSession, s.id);
        // Centring happens on the next frame.
        for (let i = 0; i < 10 && !clickable(p, s.id); i++) {
          await page.waitForTimeout(50);
          p = await page.evaluate(probeSession, s.id);
        }
        assert.ok(p && clickable(p, s.id), `${s.title} ${s.id} in view and clickable: ${JSON.stringify(p)}`);
        assert.ok(p.px >= 11, `${s.title} ${s.id}: label at ${p.px} px`);
        await page.mouse.click(p.x, p.y);
        await page.waitForURL(`**/sessions/${s.id}`);
        await page.goBack();
        await page.locator('[data-cell]').first().waitFor();
      }
    });
  });

  test('zooming out and fitting stop where labels are 11 px', async () => {
    await rig.withPage(async (page) => {
      await open(page);
      await page.getByRole('button', { name: 'fit view' }).click();
      const out = page.getByRole('button', { name: 'zoom out' });
      // It turns disabled at the smallest zoom allowed, maybe as the last zoom's animation ends
      // (between the check and the click): a click it refuses then is the end of the way out.
      for (let i = 0; i < 10 && (await out.isEnabled()); i++)
        await out.click({ timeout: 2_000 }).catch(() => {});
      await page
        .waitForFunction(
          () =>
            (document.querySelector('[aria-label="Zoom Out"]') as HTMLButtonElement | null)?.disabled ===
            true,
          undefined,
          { timeout: 5_000 },
        )
        .catch(() => {});
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
