import assert from 'node:assert/strict';
import { it } from 'node:test';
import { watchedClock } from '../helpers/clock.ts';
import { forEachWarren, op } from '../helpers/warrens.ts';

/**
 * A blocked read listens before it looks at the log: a message committed and fanned out
 * while its look is in flight (the look saw the log just before the commit) wakes it at once.
 * It used to miss that wake-up and sleep its whole wait with the message due — on another
 * node, where a notice fans a commit out the moment it arrives, a window hit under load.
 */
forEachWarren('ipc_read: no wake-up lost between the look and the wait', (target) => {
  it('a message fanned out while the read looks at the log ends the wait at once', async () => {
    const clock = watchedClock();
    const w = await target.open({ clock, kernel: { maxWaitMs: 60_000 } });
    const room = (await w.call(op, 'streams_create', { name: 'race', selfEcho: true })) as { fd: number };
    // The look returns what the log had before the commit, after the commit was fanned out.
    const log = w.store.log;
    const look = log.messagesAfter.bind(log);
    let raced = false;
    log.messagesAfter = async (...args) => {
      const seen = await look(...args);
      if (!raced) {
        raced = true;
        await w.call(op, 'ipc_write', { fd: room.fd, message: 'in the window' });
      }
      return seen;
    };
    const mark = clock.timers.length;
    const r = (await w.call(op, 'ipc_read', { fd: room.fd, wait: true, waitMs: 30_000 })) as {
      messages: Array<{ text: string }>;
    };
    assert.ok(raced, 'the write landed inside the look');
    assert.deepEqual(
      r.messages.map((m) => m.text),
      ['in the window'],
    );
    // Missed, the read would have slept its 30 s wait and then found the message; heard, it
    // looks again at once: its wait's timer never runs out.
    const ranOut = clock.since(mark).filter((x) => x.keepAlive && x.fired);
    assert.deepEqual(ranOut, [], 'the read was woken, not timed out');
  });
});
