/**
 * The web UI: JavaScript shipped on first load (gzipped), and commit → DOM latency of a stream
 * message in a real chromium with 200 live sessions, against the same messages' commit → SSE
 * receipt by a Node client in the same run (the floor the browser adds to).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { uiRig } from '../test/ui/browser.ts';
import { percentile } from './lib/stats.ts';
import { seenAt, watchTranscript } from './lib/transcript-watch.ts';
import type { BenchRow } from './store.ts';
import { uiOperatorBenches } from './ui-operator.ts';
import { uiScaleBenches } from './ui-scale.ts';

const WEB = fileURLToPath(new URL('../dist/web/', import.meta.url));
const SESSIONS = 200;
const MESSAGES = 40;

/** The entry script, its preloaded chunks and stylesheets: what `/` loads before any click. */
function firstLoadGzip(): number {
  const html = readFileSync(`${WEB}index.html`, 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map(
    (m) => m[1] as string,
  );
  return files.reduce((n, f) => n + gzipSync(readFileSync(WEB + f)).length, 0);
}

async function uiLatency(): Promise<BenchRow[]> {
  const rig = await uiRig();
  try {
    const api = rig.server.api;
    // The default zone limits (50 live sessions, 10 children) are below what is measured.
    await api('POST', '/v1/zone/limits', { maxDepth: 10, maxChildren: 1000, maxSessionsPerZone: 1000 });
    for (let i = 0; i < SESSIONS; i++) {
      await api('POST', '/v1/sessions', { title: `s${i}`, script: { steps: [{ listen: { say: 'ok' } }] } });
    }
    const room = await api<{ stream: { id: string }; fd: number }>('POST', '/v1/streams', { name: 'bench' });
    // The Node baseline: an SSE client on the same server, receipt time per message text.
    const ac = new AbortController();
    const nodeSeen = new Map<string, number>();
    const res = await fetch(`${rig.server.url}/v1/events/live?stream=${room.json.stream.id}`, {
      headers: { authorization: `Bearer ${rig.server.key}` },
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    void (async () => {
      const dec = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        const now = Date.now();
        for (const m of dec.decode(value, { stream: true }).matchAll(/"text":"(m\d+)"/g))
          nodeSeen.set(m[1] as string, now);
      }
    })();
    const { page } = await rig.login();
    await page.goto(`${rig.server.url}/coordination?stream=${room.json.stream.id}`);
    await page.getByTestId('transcript').waitFor();
    await watchTranscript(page);
    const dom: number[] = [];
    const sse: number[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      const text = `m${i}`;
      const r = await api<{ seq: number }>('POST', `/v1/fds/${room.json.fd}/write`, { message: text });
      const ev = await api<{ events: { ts: number }[] }>(
        'GET',
        `/v1/events?stream=${room.json.stream.id}&limit=1`,
      );
      const committed = ev.json.events[0]?.ts ?? Date.now();
      void r;
      const at = await seenAt(page, text);
      dom.push((at ?? Date.now()) - committed);
      const n = nodeSeen.get(text);
      if (n !== undefined) sse.push(n - committed);
    }
    ac.abort();
    const s = (a: number[]) => [...a].sort((x, y) => x - y);
    const domP50 = percentile(s(dom), 0.5);
    const domP95 = percentile(s(dom), 0.95);
    const sseP50 = percentile(s(sse), 0.5);
    const sseP95 = percentile(s(sse), 0.95);
    return [
      {
        name: `uiCommitToDom p50 (${SESSIONS} live sessions)`,
        value: domP50,
        unit: 'ms',
        baseline: sseP50,
        ratio: domP50 / Math.max(1, sseP50),
      },
      {
        name: `uiCommitToDom p95 (${SESSIONS} live sessions)`,
        value: domP95,
        unit: 'ms',
        baseline: sseP95,
        ratio: domP95 / Math.max(1, sseP95),
        max: 100,
      },
    ];
  } finally {
    await rig.close();
  }
}

async function uiFirstLoad(): Promise<BenchRow[]> {
  const kb = firstLoadGzip() / 1024;
  return [{ name: 'uiFirstLoadJsCss gzip', value: Math.round(kb * 10) / 10, unit: 'KB', max: 300 }];
}

export const uiBenches = { uiFirstLoad, uiLatency, ...uiScaleBenches, ...uiOperatorBenches };
