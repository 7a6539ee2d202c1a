/**
 * Task dispatch (the orchestration plugin):
 * - taskDispatch: 1 000 tasks made ready at once (each depends on one held gate task, which
 *   is then started) until every one has its session. Per task: from its move to `ready` to
 *   its `task.dispatched`, read from the log. Baseline, in the same run: 1 000 bare
 *   `ipc_spawn`s of the same agent, issued 16 at a time (dispatch's own concurrency).
 */

import type { PluginInstance } from '../src/contract/plugin.ts';
import type { Engine } from '../src/plugins/orchestration/engine.ts';
import { Warren } from '../src/syscalls/warren.ts';
import { operator } from '../src/vocab/principal.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

const op = operator('bench');
const round = (n: number, digits = 2) => Number(n.toFixed(digits));
const benchKernel = {
  limits: { maxDepth: 10, maxChildren: 10_000, maxSessionsPerZone: 10_000 },
  resumeOnStart: false,
  reconcileIntervalMs: 60_000,
};
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;

// biome-ignore lint/suspicious/noExplicitAny: outputs are checked by their schemas
type Any = any;

export async function taskDispatch(opts: { tasks?: number } = {}): Promise<BenchRow[]> {
  const n = opts.tasks ?? 1000;
  const script = { steps: [{ listen: {} }] };

  // Baseline: bare spawns, 16 in flight.
  let bareMs: number;
  {
    using tmp = tempDir();
    const w = await Warren.open({ dataDir: tmp.dir, kernel: benchKernel });
    try {
      let next = 0;
      const t0 = performance.now();
      const worker = async () => {
        while (next++ < n) await w.call(op, 'ipc_spawn', { runtime: 'script', script, pipe: 'detach' });
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      bareMs = performance.now() - t0;
    } finally {
      await w.close();
    }
  }

  using tmp = tempDir();
  const w = await Warren.open({ dataDir: tmp.dir, kernel: benchKernel });
  try {
    const gate = (
      (await w.call(op, 'task_create', {
        title: 'gate',
        prompt: 'go',
        hold: true,
        spawn: { script: { steps: [{ say: 'open' }] } },
      })) as Any
    ).task.id;
    const ids = new Set<string>();
    for (let i = 0; i < n; i++) {
      const r = (await w.call(op, 'task_create', {
        title: `t${i}`,
        prompt: 'p',
        dependsOn: [gate],
        spawn: { script },
      })) as Any;
      ids.add(r.task.id);
    }
    const { engine } = w.plugins.get<{ engine: Engine } & PluginInstance>('orchestration');
    await engine.idle();
    const t0 = performance.now();
    await w.call(op, 'task_start', { id: gate });
    for (;;) {
      const row = await w.store.reader
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('type', '=', 'task.dispatched')
        .executeTakeFirstOrThrow();
      if (Number(row.n) >= n + 1) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const totalMs = performance.now() - t0;
    const events = (await w.call(op, 'events', { type: 'task.status', limit: 10_000 })) as Any;
    const dispatched = (await w.call(op, 'events', { type: 'task.dispatched', limit: 10_000 })) as Any;
    const readyAt = new Map<string, number>();
    for (const e of events.events) if (e.payload.to === 'ready') readyAt.set(e.payload.task, e.ts);
    const lat: number[] = [];
    for (const e of dispatched.events) {
      if (!ids.has(e.payload.task)) continue;
      const r = readyAt.get(e.payload.task);
      if (r !== undefined) lat.push(e.ts - r);
    }
    lat.sort((a, b) => a - b);
    return [
      {
        name: `task dispatch: ${n} ready tasks → sessions`,
        value: round(totalMs, 0),
        unit: 'ms',
        baseline: round(bareMs, 0),
        ratio: round(totalMs / bareMs, 2),
        note: `baseline: ${n} bare ipc_spawns, 16 in flight; ${round((n / totalMs) * 1000, 0)} tasks/s`,
      },
      {
        name: 'task dispatch: ready → dispatched p50',
        value: pct(lat, 0.5),
        unit: 'ms',
        note: `${lat.length} tasks, from the log (ms resolution)`,
      },
      { name: 'task dispatch: ready → dispatched p99', value: pct(lat, 0.99), unit: 'ms' },
    ];
  } finally {
    await w.close();
  }
}

export const taskBenches = { taskDispatch };
