/**
 * The web UI at scale in a real chromium: time to first render of Sessions, the Coordination
 * list and its graph, and how the graph answers a wheel zoom and a drag pan (time for each
 * to repaint, and long tasks meanwhile), at 500 sessions / 200 streams against the same
 * figures at 10 sessions / 4 streams measured in the same run.
 */
import type { Page } from 'playwright-core';
import { uiRig } from '../test/ui/browser.ts';
import { percentile, round } from './lib/stats.ts';
import type { BenchRow } from './store.ts';

interface Size {
  sessions: number;
  streams: number;
}
const SMALL: Size = { sessions: 10, streams: 4 };
const LARGE: Size = { sessions: 500, streams: 200 };
const GESTURES = 20;

interface Figures {
  sessionsMs: number;
  listMs: number;
  graphMs: number;
  zoomP95: number;
  panP95: number;
  longTaskMs: number;
  sessionRows: number;
}

export const frames = (page: Page) =>
  page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(0))))');

export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function measure(size: Size): Promise<Figures> {
  const rig = await uiRig();
  try {
    const api = rig.server.api;
    // The default zone limits (50 live sessions, 10 children) are below what is measured.
    await api('POST', '/v1/zone/limits', { maxDepth: 10, maxChildren: 1000, maxSessionsPerZone: 1000 });
    const ids: string[] = [];
    for (let i = 0; i < size.sessions; i++) {
      const r = await api<{ session: { id: string } }>('POST', '/v1/sessions', {
        title: `s${i}`,
        script: { steps: [{ listen: {} }] },
      });
      if (r.status !== 200) throw new Error(`spawn ${i}: ${r.status} ${JSON.stringify(r.json)}`);
      ids.push(r.json.session.id);
    }
    // Every stream has two members, so the graph has edges as well as nodes.
    for (let i = 0; i < size.streams; i++) {
      await api('POST', '/v1/streams', { name: `room-${i}` });
      for (const k of [0, 1]) {
        const s = ids[(2 * i + k) % ids.length];
        await api('POST', `/v1/streams/room-${i}/attach`, { session: s });
      }
    }
    const { page } = await rig.login();
    page.setDefaultTimeout(60_000);
    await page.goto(`${rig.server.url}/inbox`);
    await page.getByTestId('live-status').getByText('● live').waitFor();
    const sessionsMs = await timed(async () => {
      await page.getByRole('link', { name: 'Sessions' }).click();
      await page.locator('[data-session]').first().waitFor();
    });
    const sessionRows = await page.locator('[data-session]').count();
    const listMs = await timed(async () => {
      await page.getByRole('link', { name: 'Coordination' }).click();
      await page.locator('[data-stream]').first().waitFor();
    });
    const graphMs = await timed(async () => {
      await page.getByRole('button', { name: 'Graph' }).click();
      await page.locator('.react-flow__node').first().waitFor();
      await frames(page);
    });
    const pane = page.locator('.react-flow__pane');
    const box = await pane.boundingBox();
    if (!box) throw new Error('no graph pane');
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    await page.mouse.move(cx, cy);
    await page.evaluate(`(() => {
      window.__long = 0;
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long += e.duration; })
        .observe({ type: 'longtask' });
    })()`);
    const zoom: number[] = [];
    for (let i = 0; i < GESTURES; i++) {
      zoom.push(
        await timed(async () => {
          await page.mouse.wheel(0, i % 2 ? 240 : -240);
          await frames(page);
        }),
      );
    }
    const pan: number[] = [];
    for (let i = 0; i < GESTURES; i++) {
      pan.push(
        await timed(async () => {
          await page.mouse.down();
          await page.mouse.move(cx + (i % 2 ? -80 : 80), cy + 30, { steps: 4 });
          await page.mouse.up();
          await frames(page);
        }),
      );
    }
    const longTaskMs = Number(await page.evaluate('window.__long'));
    const p95 = (a: number[]) =>
      percentile(
        [...a].sort((x, y) => x - y),
        0.95,
      );
    return {
      sessionsMs,
      listMs,
      graphMs,
      zoomP95: p95(zoom),
      panP95: p95(pan),
      longTaskMs,
      sessionRows,
    };
  } finally {
    await rig.close();
  }
}

async function uiScale(): Promise<BenchRow[]> {
  const small = await measure(SMALL);
  const large = await measure(LARGE);
  const label = `${LARGE.sessions} sessions/${LARGE.streams} streams`;
  const row = (name: string, key: keyof Figures, max?: number): BenchRow => ({
    name: `${name} (${label})`,
    value: round(large[key], 1),
    unit: 'ms',
    baseline: round(small[key], 1),
    ratio: round(large[key] / Math.max(1, small[key]), 2),
    ...(max !== undefined ? { max } : {}),
  });
  return [
    row('uiSessionsFirstRender', 'sessionsMs'),
    row('uiCoordinationListFirstRender', 'listMs'),
    row('uiCoordinationGraphFirstRender', 'graphMs'),
    row('uiGraphWheelZoom repaint p95', 'zoomP95', 100),
    row('uiGraphDragPan repaint p95', 'panP95', 150),
    row(`uiGraph long tasks during ${2 * GESTURES} gestures`, 'longTaskMs'),
    {
      name: `uiSessionsRowsInDom (${label})`,
      value: large.sessionRows,
      unit: 'rows',
      baseline: small.sessionRows,
      max: 100,
    },
  ];
}

export const uiScaleBenches = { uiScale };
