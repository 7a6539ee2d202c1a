/**
 * Schedule firing (the scheduling plugin):
 * - scheduleLateness: 1 000 active interval schedules (every minute, like a one-minute cron),
 *   their first times spread over 15 s (so every one fires once in the window: ~67 fires/s),
 *   each writing a message to a room when it fires. Per fire: how late it was logged
 *   (`fired_at - due_at`, the log's ms clock) and how late its action was done
 *   (`finished_at - due_at`). Baseline, in the same run: 1 000 bare `setTimeout`s on the same
 *   times, in the same process (how late the event loop itself is). Goal: p99 ≤ 50 ms.
 */

import type { SchedulingInstance } from '../src/plugins/scheduling/syscalls.ts';
import { Warren } from '../src/syscalls/warren.ts';
import { operator } from '../src/vocab/principal.ts';
import { round, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import { type BenchRow, dropSchema, pgProblem } from './store.ts';

const PG_URL = process.env.WARREN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const op = operator('bench');
const N = Number(process.env.SCHED_BENCH_N ?? 1000);
const PERIOD = 60_000;
const RUN_MS = 15_000;
const GOAL_P99 = 50;

/** Bare timers on the same times: the floor of what any timer-driven firing can reach. */
async function timerBaseline(): Promise<number[]> {
  const late: number[] = [];
  const start = Date.now() + 200;
  const end = start + RUN_MS;
  await new Promise<void>((done) => {
    let live = N;
    for (let i = 0; i < N; i++) {
      let due = start + Math.floor((i * RUN_MS) / N);
      const arm = () => {
        setTimeout(
          () => {
            late.push(Date.now() - due);
            due += PERIOD;
            if (due < end) arm();
            else if (--live === 0) done();
          },
          Math.max(0, due - Date.now()),
        );
      };
      arm();
    }
  });
  return late;
}

async function firing(backend: 'sqlite' | 'postgres'): Promise<{ logged: number[]; done: number[] }> {
  using tmp = tempDir();
  const schema = `bench_${Math.random().toString(36).slice(2, 10)}`;
  const w = await Warren.open({
    ...(backend === 'postgres' ? { db: PG_URL, schema } : { dataDir: tmp.dir }),
    kernel: { reconcileIntervalMs: 60_000, resumeOnStart: false },
  });
  try {
    await w.call(op, 'streams_create', { name: 'ticks' });
    // Paused while they are made, so the first fires are spread evenly over the window.
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const r = (await w.call(op, 'schedule_create', {
        name: `s${i}`,
        intervalMs: PERIOD,
        paused: true,
        stream: { stream: 'ticks', message: `s${i}` },
      })) as { schedule: { id: string } };
      ids.push(r.schedule.id);
    }
    const start = Date.now() + 500;
    const { scheduler, tables } = w.plugins.get<SchedulingInstance>('scheduling');
    await tables.write(async (tx) => {
      for (const [i, id] of ids.entries()) {
        await tx.db
          .updateTable('scheduling_schedules')
          .set({ enabled: 1, next_fire_at: start + Math.floor((i * RUN_MS) / N) })
          .where('id', '=', id)
          .execute();
      }
    });
    scheduler.poke();
    await new Promise((r) => setTimeout(r, RUN_MS + 500));
    await tables.write(async (tx) => {
      await tx.db.updateTable('scheduling_schedules').set({ enabled: 0 }).execute();
    });
    await scheduler.settled();
    const fires = await tables.reader
      .selectFrom('scheduling_fires')
      .select(['due_at', 'fired_at', 'finished_at'])
      .execute();
    return {
      logged: fires.map((f) => Number(f.fired_at) - Number(f.due_at)),
      done: fires.filter((f) => f.finished_at !== null).map((f) => Number(f.finished_at) - Number(f.due_at)),
    };
  } finally {
    await w.close();
    if (backend === 'postgres') await dropSchema(schema);
  }
}

export async function scheduleLateness(): Promise<BenchRow[]> {
  const base = summary(await timerBaseline());
  const rows: BenchRow[] = [
    {
      name: `schedule lateness baseline: ${N} bare setTimeouts, p50`,
      value: base.p50,
      unit: 'ms',
      note: `${base.n} timers fired over ${RUN_MS / 1000} s`,
    },
    { name: 'schedule lateness baseline: bare setTimeouts, p99', value: base.p99, unit: 'ms' },
  ];
  for (const backend of ['sqlite', 'postgres'] as const) {
    const problem = backend === 'postgres' ? await pgProblem() : undefined;
    if (problem) {
      rows.push({
        name: `schedule lateness [${backend}]`,
        value: Number.NaN,
        unit: '',
        note: `skipped: ${problem}`,
      });
      continue;
    }
    const r = await firing(backend);
    const logged = summary(r.logged);
    const done = summary(r.done);
    rows.push(
      {
        name: `schedule lateness [${backend}]: ${N} schedules, fire logged p50`,
        value: logged.p50,
        unit: 'ms',
        baseline: base.p50,
        note: `${logged.n} fires in ${RUN_MS / 1000} s (${round(logged.n / (RUN_MS / 1000), 0)}/s); max ${logged.max} ms`,
      },
      {
        name: `schedule lateness [${backend}]: fire logged p99`,
        value: logged.p99,
        unit: 'ms',
        baseline: base.p99,
        max: GOAL_P99,
      },
      {
        name: `schedule lateness [${backend}]: action done (message written) p50`,
        value: done.p50,
        unit: 'ms',
      },
      {
        name: `schedule lateness [${backend}]: action done p99`,
        value: done.p99,
        unit: 'ms',
        note: `max ${done.max} ms`,
      },
    );
  }
  return rows;
}

export const scheduleBenches = { scheduleLateness };
