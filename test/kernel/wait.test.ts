import assert from 'node:assert/strict';
import { it } from 'node:test';
import { watchedClock } from '../helpers/clock.ts';
import {
  asSession,
  call,
  forEachWarren,
  idleScript,
  until,
  WAIT_MS,
  waitStatus,
} from '../helpers/warrens.ts';

forEachWarren('ipc_wait', (t) => {
  it('returns at once for an idle child with nothing pending, or a stopped one', async () => {
    const w = await t.open();
    const c = await call(w, 'ipc_spawn', { script: idleScript });
    await waitStatus(w, c.session.id, 'idle');
    const r = await call(w, 'ipc_wait', { fd: c.lifecycleFd });
    assert.deepEqual([r.status, r.timedOut], ['idle', false]);
    await call(w, 'kill', { id: c.session.id });
    const s = await call(w, 'ipc_wait', { session: c.session.id });
    assert.deepEqual([s.status, s.endReason, s.timedOut], ['stopped', 'killed', false]);
  });

  it('waits for the turn that input started to end, and hands back the last message', async () => {
    const w = await t.open({ kernel: { maxWaitMs: 5000 } });
    const c = await call(w, 'ipc_spawn', {
      script: {
        steps: [
          { wait: { as: 'task' } },
          { sleep: 150 },
          { say: 'did ${task.messages.0.text}' },
          { listen: {} },
        ],
      },
      pipe: 'async',
    });
    await waitStatus(w, c.session.id, 'idle');
    await call(w, 'ipc_write', { fd: c.pipeFd, message: 'the dishes' });
    const r = await call(w, 'ipc_wait', { fd: c.pipeFd });
    // It waited for the turn: the last message is the one said after the turn's 150 ms sleep.
    assert.deepEqual([r.status, r.lastMessage, r.timedOut], ['idle', 'did the dishes', false]);
  });

  it('is bounded: a busy child gives timedOut, and the call can be repeated', async () => {
    const clock = watchedClock();
    const w = await t.open({ clock, kernel: { maxWaitMs: 200 } });
    const c = await call(w, 'ipc_spawn', { script: { steps: [{ sleep: 60_000 }] } });
    await until(
      async () => clock.timers.some((x) => x.keepAlive && x.ms === 60_000),
      WAIT_MS,
      "the child's sleep",
    );
    const mark = clock.timers.length;
    const r = await call(w, 'ipc_wait', { fd: c.lifecycleFd, waitMs: 60_000 });
    assert.deepEqual([r.status, r.timedOut], ['running', true]);
    // Bounded: the 60 s asked for was capped at maxWaitMs, and the wait answered when that ran out.
    const waits = clock.since(mark).filter((x) => x.keepAlive);
    assert.ok(waits.length > 0 && waits.every((x) => x.ms <= 200), `waits: ${waits.map((x) => x.ms)}`);
    assert.ok(waits.some((x) => x.fired));
    const again = await call(w, 'ipc_wait', { fd: c.lifecycleFd, waitMs: 50 });
    assert.equal(again.timedOut, true);
  });

  it('only for children: another session’s subtree is refused, a room fd is not a child', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const b = await call(w, 'ipc_spawn', { script: idleScript });
    await assert.rejects(call(w, 'ipc_wait', { session: b.session.id }, asSession(a.session.id)), {
      code: 'forbidden',
    });
    const room = await call(w, 'streams_create', { name: 'not-a-child' });
    await assert.rejects(call(w, 'ipc_wait', { fd: room.fd }), { code: 'invalid_input' });
    await assert.rejects(call(w, 'ipc_wait', {}), { code: 'invalid_input' });
  });
});
