/**
 * The operator console at 1,000 sessions and 300 rooms against the same at 100 / 30, in one
 * run, in a real chromium: first render of each page, commit → DOM of a room message, bytes
 * an idle Coordination tab moves per minute while agents work, and the graph's frame time
 * while it is panned.
 */
import type { Page } from 'playwright-core';
import type { ServerProcess } from '../test/helpers/server.ts';
import { uiRig } from '../test/ui/browser.ts';
import { populate } from '../test/ui/scene-scale.ts';
import { percentile, round } from './lib/stats.ts';
import { seenAt, watchTranscript } from './lib/transcript-watch.ts';
import type { BenchRow } from './store.ts';
import { frames, timed } from './ui-scale.ts';

interface Size {
  sessions: number;
  rooms: number;
  taskTrees: number;
}
const SMALL: Size = { sessions: 100, rooms: 30, taskTrees: 5 };
const LARGE: Size = { sessions: 1000, rooms: 300, taskTrees: 20 };
const MESSAGES = 30;
/** The idle window: agents answering inputs at a steady rate while the tab only watches. */
const IDLE_MS = 30_000;
const IDLE_INPUTS_PER_S = 4;

type Figures = Record<string, number>;

const p = (a: number[], q: number) =>
  percentile(
    [...a].sort((x, y) => x - y),
    q,
  );

async function firstRenders(page: Page, url: string, task: string): Promise<Figures> {
  const open = (path: string, selector: string) =>
    timed(async () => {
      await page.goto(url + path);
      await page.locator(selector).first().waitFor();
      await frames(page);
    });
  return {
    // The console's own pages: what they list, or the line each shows when it lists nothing.
    home: await open('/', '.card.need, [data-escalation], p:text-is("Nothing needs you now.")'),
    inbox: await open('/inbox', '[data-escalation], p:text-is("Nothing waits for you.")'),
    schedules: await open('/schedules', '[data-schedule], p:text-is("No schedules.")'),
    knowledge: await open('/knowledge', '[data-finding], li:text-is("No findings.")'),
    coordination: await open('/coordination', '[data-stream]'),
    graph: await open('/coordination?view=graph', '[data-cell]'),
    sessions: await open('/sessions', '[data-session]'),
    tasks: await open('/tasks', '[data-task]'),
    taskGraph: await open('/tasks?view=graph', '.react-flow__node'),
    timeline: await open(`/tasks/${task}/timeline`, '[data-lane]'),
    log: await open('/log', '.log-row'),
  };
}

async function commitToDom(page: Page, url: string, api: ServerProcess['api']) {
  const room = await api<{ stream: { id: string }; fd: number }>('POST', '/v1/streams', {
    name: 'bench-latency',
  });
  await page.goto(`${url}/coordination?stream=${room.json.stream.id}`);
  await page.getByTestId('transcript').waitFor();
  await watchTranscript(page);
  const dom: number[] = [];
  for (let i = 0; i < MESSAGES; i++) {
    const text = `m${i}`;
    await api('POST', `/v1/fds/${room.json.fd}/write`, { message: text });
    const ev = await api<{ events: { ts: number }[] }>(
      'GET',
      `/v1/events?stream=${room.json.stream.id}&limit=1`,
    );
    const committed = ev.json.events[0]?.ts ?? Date.now();
    const at = await seenAt(page, text);
    dom.push((at ?? Date.now()) - committed);
  }
  return { domP50: p(dom, 0.5), domP95: p(dom, 0.95) };
}

/** Bytes the tab receives (CDP) over the idle window, while sessions answer inputs. */
async function idleBytes(
  page: Page,
  url: string,
  api: (m: string, path: string, b?: unknown) => Promise<unknown>,
  ids: string[],
) {
  await page.goto(`${url}/coordination`);
  await page.locator('[data-stream]').first().waitFor();
  await page.waitForTimeout(1000);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  let bytes = 0;
  cdp.on('Network.dataReceived', (e: { encodedDataLength: number; dataLength: number }) => {
    bytes += Math.max(e.encodedDataLength, e.dataLength);
  });
  const t0 = Date.now();
  let i = 0;
  while (Date.now() - t0 < IDLE_MS) {
    const id = ids[(i * 7919) % ids.length] as string;
    await api('POST', `/v1/sessions/${id}/send`, { text: `tick ${i}` });
    i++;
    await new Promise((r) => setTimeout(r, 1000 / IDLE_INPUTS_PER_S));
  }
  await page.waitForTimeout(500);
  const ms = Date.now() - t0;
  await cdp.detach();
  return { idleKBperMin: bytes / 1024 / (ms / 60_000), inputs: i };
}

/** Frame intervals (rAF) while the graph is dragged: its frame time. */
async function graphFrames(page: Page, url: string) {
  await page.goto(`${url}/coordination?view=graph`);
  await page.locator('[data-cell]').first().waitFor();
  const box = await page.locator('.react-flow__pane').boundingBox();
  if (!box) throw new Error('no graph pane');
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  // A string, not a function: tsx would wrap the named callback in a helper the page lacks.
  await page.evaluate(`(() => {
    window.gaps = [];
    window.on = true;
    let last = performance.now();
    const tick = (t) => {
      window.gaps.push(t - last);
      last = t;
      if (window.on) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  })()`);
  for (let i = 0; i < 12; i++) {
    await page.mouse.move(cx, cy);
    await page.mouse.down();
    await page.mouse.move(cx + (i % 2 ? 300 : -300), cy + (i % 3 ? 40 : -40), { steps: 10 });
    await page.mouse.up();
  }
  const gaps = await page.evaluate(() => {
    const w = window as unknown as { gaps: number[]; on: boolean };
    w.on = false;
    return w.gaps.slice(1);
  });
  return { frameP50: p(gaps, 0.5), frameP95: p(gaps, 0.95) };
}

async function measure(size: Size): Promise<Figures> {
  const rig = await uiRig();
  try {
    const scene = await populate(rig.server, size);
    const { page } = await rig.login();
    page.setDefaultTimeout(120_000);
    const url = rig.server.url;
    const renders = await firstRenders(page, url, scene.tasks[0] as string);
    const latency = await commitToDom(page, url, rig.server.api);
    const idle = await idleBytes(
      page,
      url,
      rig.server.api,
      scene.sessions.map((s) => s.id),
    );
    const graph = await graphFrames(page, url);
    return { ...renders, ...latency, ...idle, ...graph };
  } finally {
    await rig.close();
  }
}

async function uiOperator(): Promise<BenchRow[]> {
  const small = await measure(SMALL);
  const large = await measure(LARGE);
  const label = `${LARGE.sessions} sessions/${LARGE.rooms} rooms vs ${SMALL.sessions}/${SMALL.rooms}`;
  const row = (name: string, key: string, unit: string, max?: number): BenchRow => ({
    name: `${name} (${label})`,
    value: round(large[key] ?? Number.NaN, 1),
    unit,
    baseline: round(small[key] ?? Number.NaN, 1),
    ratio: round((large[key] ?? 0) / Math.max(0.001, small[key] ?? 0), 2),
    ...(max !== undefined ? { max } : {}),
  });
  return [
    row('uiFirstRender home (needs me)', 'home', 'ms'),
    row('uiFirstRender inbox', 'inbox', 'ms'),
    row('uiFirstRender schedules', 'schedules', 'ms'),
    row('uiFirstRender knowledge', 'knowledge', 'ms'),
    row('uiFirstRender coordination list', 'coordination', 'ms'),
    row('uiFirstRender coordination graph', 'graph', 'ms'),
    row('uiFirstRender sessions', 'sessions', 'ms'),
    row('uiFirstRender tasks list', 'tasks', 'ms'),
    row('uiFirstRender task graph', 'taskGraph', 'ms'),
    row('uiFirstRender task timeline', 'timeline', 'ms'),
    row('uiFirstRender log', 'log', 'ms'),
    row('uiCommitToDom p50', 'domP50', 'ms'),
    row('uiCommitToDom p95', 'domP95', 'ms', 100),
    // 50 KB/s is 3,000 KB per minute.
    row(`uiIdleTab bytes/min, ${IDLE_INPUTS_PER_S} inputs/s`, 'idleKBperMin', 'KB/min', 3000),
    row('uiGraphFrame p50 while dragged', 'frameP50', 'ms'),
    row('uiGraphFrame p95 while dragged', 'frameP95', 'ms'),
  ];
}

export const uiOperatorBenches = { uiOperator };
