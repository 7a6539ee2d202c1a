/** The missed-fire and overlap policies, with an injected clock, on SQLite and PostgreSQL. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { manualClock } from '../helpers/clock.ts';
import { call, forEachWarren, until } from '../helpers/warrens.ts';
import { listens } from '../orchestration/helpers.ts';
import { create, firesOf, room, show, tick } from './helpers.ts';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const MIN = 60_000;

forEachWarren('scheduling: missed-fire and overlap policies', (target) => {
  const open = async (graceMs = 60_000) => {
    const clock = manualClock(T0);
    const w = await target.open({ clock, plugins: { config: { scheduling: { graceMs } } } });
    await room(w);
    return { w, clock };
  };
  const note = { stream: { stream: 'ops', message: 'tick' } };

  for (const [policy, expected] of [
    ['skip', 0],
    ['run-once', 1],
    ['run-all', 4],
  ] as const) {
    it(`after downtime, missed=${policy} fires ${expected} (run-all capped), and the next time is after now`, async () => {
      const { w, clock } = await open(1000);
      const s = await create(w, { intervalMs: MIN, missed: policy, missedCap: 4, ...note });
      // Ten periods pass with the server "down" (no pass), the last one over grace too.
      clock.set(T0 + 10 * MIN + 30_000);
      await tick(w);
      const fires = await firesOf(w, s.id);
      assert.equal(fires.length, expected);
      if (policy === 'run-all') {
        assert.deepEqual(
          fires.map((f: { dueAt: number }) => f.dueAt),
          [7, 8, 9, 10].map((k) => T0 + k * MIN),
        );
      }
      assert.equal((await show(w, s.id)).schedule.nextFireAt, T0 + 11 * MIN);
      const missed = (await call(w, 'events', { type: 'schedule.missed' })).events;
      assert.equal(missed.length, 1);
      assert.equal(missed[0].payload.missed, 10 - expected);
    });
  }

  it('pausing stops fires; resuming does not fire what fell due while paused', async () => {
    const { w, clock } = await open();
    const s = await create(w, { intervalMs: MIN, missed: 'run-all', ...note });
    await call(w, 'schedule_pause', { id: s.id });
    clock.set(T0 + 5 * MIN);
    await tick(w);
    assert.equal((await firesOf(w, s.id)).length, 0);
    const resumed = (await call(w, 'schedule_resume', { id: s.id })).schedule;
    assert.equal(resumed.enabled, true);
    assert.equal(resumed.nextFireAt, T0 + 6 * MIN);
    await tick(w);
    assert.equal((await firesOf(w, s.id)).length, 0);
  });

  const taskThatStays = { task: { title: 'nightly', prompt: 'do it', spawn: listens } };
  const overlapRun = async (overlap: string) => {
    const { w, clock } = await open();
    const s = await create(w, { intervalMs: MIN, overlap, ...taskThatStays });
    clock.set(T0 + MIN);
    await tick(w);
    const [first] = await firesOf(w, s.id);
    assert.equal(first.status, 'running', 'its task runs on');
    clock.set(T0 + 2 * MIN);
    await tick(w);
    return { w, clock, s, first };
  };

  it('overlap=skip-if-running logs a skipped fire while the last one runs', async () => {
    const { w, s } = await overlapRun('skip-if-running');
    const fires = await firesOf(w, s.id);
    assert.deepEqual(
      fires.map((f: { status: string }) => f.status),
      ['running', 'skipped'],
    );
    assert.match(fires[1].error, /overlap/);
  });

  it('overlap=queue holds the fire until the running one ends, then runs it', async () => {
    const { w, s, first } = await overlapRun('queue');
    assert.deepEqual(
      (await firesOf(w, s.id)).map((f: { status: string }) => f.status),
      ['running', 'queued'],
    );
    await call(w, 'task_cancel', { id: first.target });
    await until(
      async () => {
        await tick(w);
        const f = await firesOf(w, s.id);
        return f[0].status === 'error' && f[1].status === 'running' ? f : null;
      },
      10_000,
      'the queued fire to run',
    );
    const fires = await firesOf(w, s.id);
    assert.equal(fires[0].error, 'task cancelled');
    assert.notEqual(fires[1].target, first.target, 'a task of its own');
  });

  it('overlap=allow runs fires side by side', async () => {
    const { w, s } = await overlapRun('allow');
    const fires = await firesOf(w, s.id);
    assert.deepEqual(
      fires.map((f: { status: string }) => f.status),
      ['running', 'running'],
    );
  });
});
