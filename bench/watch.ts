/**
 * The coordinator bridge (turns plugin): how fast a long poll wakes and a prompt becomes an
 * active turn. Run on its own (`npx tsx bench/watch.ts`) or `npm run bench -- watch`.
 *
 * - watch_events wake-up: a `bridge_watch_events` long poll waits; one event is committed;
 *   the time from the commit call to the poll's answer. Baseline, same run: the same commit
 *   seen by a raw commit listener (`writer.onCommit`, what the kernel's waits are built on).
 * - send_prompt → active: the `bridge_send_prompt` call (turn row, log event and stdin
 *   delivery in one transaction, answering `active`) against the kernel's plain `send` to the
 *   same kind of session. Each turn is awaited before the next.
 * SQLite, in process.
 */
import { realpathSync } from 'node:fs';
import { Warren } from '../src/syscalls/warren.ts';
import { op, roomyKernel } from './lib/sessions.ts';
import { round, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

const WAKES = 200;
const PROMPTS = 100;
const LISTEN = { steps: [{ listen: { say: 'ok' } }] };

const ms = (t0: number) => performance.now() - t0;

async function open(dir: string): Promise<Warren> {
  return Warren.open({
    dataDir: dir,
    kernel: roomyKernel(false),
    plugins: { config: { turns: { mutations: ['sessions'], workdirRoots: [dir] } } },
  });
}

async function watchWake(): Promise<BenchRow[]> {
  using tmp = tempDir();
  const w = await open(realpathSync(tmp.dir));
  try {
    const ping = (i: number) => ({
      zone: 'default',
      type: 'bench.ping',
      actor: 'bench',
      session_id: null,
      payload: { i },
    });
    const watched: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < WAKES; i++) {
      const head = await w.store.log.head();
      let t0 = 0;
      let rawAt = 0;
      const off = w.store.writer.onCommit((events) => {
        if (events.some((e) => e.type === 'bench.ping')) rawAt = performance.now();
      });
      const poll = w.call(op, 'bridge_watch_events', {
        after_seq: head,
        event_types: ['bench.ping'],
        timeout_ms: 30_000,
      });
      // Let the poll reach its wait before the commit.
      await new Promise((r) => setTimeout(r, 2));
      t0 = performance.now();
      await w.store.writer.append([ping(i)]);
      const r = (await poll) as { events: unknown[] };
      watched.push(ms(t0));
      raw.push(rawAt - t0);
      off();
      if (r.events.length !== 1) throw new Error(`watch answered ${r.events.length} events`);
    }
    const a = summary(watched);
    const b = summary(raw);
    return [
      {
        name: 'watch_events wake-up p50 (commit → poll answers)',
        value: round(a.p50),
        unit: 'ms',
        baseline: round(b.p50),
        ratio: round(a.p50 / b.p50),
      },
      {
        name: 'watch_events wake-up p99',
        value: round(a.p99),
        unit: 'ms',
        baseline: round(b.p99),
        ratio: round(a.p99 / b.p99),
      },
    ];
  } finally {
    await w.close();
  }
}

async function sendToActive(): Promise<BenchRow[]> {
  using tmp = tempDir();
  const dir = realpathSync(tmp.dir);
  const w = await open(dir);
  try {
    const spawn = async () =>
      (
        (await w.call(op, 'ipc_spawn', { runtime: 'script', cwd: dir, script: LISTEN, pipe: 'detach' })) as {
          session: { id: string };
        }
      ).session.id;
    const bridged = await spawn();
    await w.call(op, 'bridge_register_session', { session_id: bridged, allow_mutation: true });
    const plain = await spawn();
    const prompt: number[] = [];
    const send: number[] = [];
    for (let i = 0; i < PROMPTS; i++) {
      let t0 = performance.now();
      const r = (await w.call(op, 'bridge_send_prompt', {
        session_id: bridged,
        prompt: `p${i}`,
        allow_mutation: true,
      })) as {
        turn: { turn_id: string; status: string };
      };
      prompt.push(ms(t0));
      if (r.turn.status !== 'active') throw new Error(`turn is ${r.turn.status}`);
      await w.call(op, 'bridge_await_turn', { turn_id: r.turn.turn_id, timeout_ms: 30_000 });
      t0 = performance.now();
      await w.call(op, 'send', { id: plain, text: `p${i}` });
      send.push(ms(t0));
      await w
        .call(op, 'ipc_wait', { session: plain })
        .catch(() => w.kernel.waitChild(op, { session: plain }));
    }
    const a = summary(prompt);
    const b = summary(send);
    return [
      {
        name: 'send_prompt → turn active p50',
        value: round(a.p50),
        unit: 'ms',
        baseline: round(b.p50),
        ratio: round(a.p50 / b.p50),
        note: 'baseline: the kernel’s send',
      },
      {
        name: 'send_prompt → turn active p99',
        value: round(a.p99),
        unit: 'ms',
        baseline: round(b.p99),
        ratio: round(a.p99 / b.p99),
      },
    ];
  } finally {
    await w.close();
  }
}

export const watchBenches = { watchWake, sendToActive };

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const rows of [await watchWake(), await sendToActive()])
    for (const r of rows) console.log(JSON.stringify(r));
}
