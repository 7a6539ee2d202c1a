import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachWarren, op } from '../helpers/warrens.ts';

/**
 * A blocked read listens before it looks at the log: a message committed and fanned out
 * while its look is in flight (the look saw the log just before the commit) wakes it at once.
 * It used to miss that wake-up and sleep its whole wait with the message due — on another
 * node, where a notice fans a commit out the moment it arrives, a window hit under load.
 */
forEachWarren('ipc_read: no wake-up lost between the look and the wait', (target) => {
  it('a message fanned out while the read looks at the log ends the wait at once', async () => {
    const w = await target.open({ kernel: { maxWaitMs: 60_000 } });
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
    const t0 = Date.now();
    const r = (await w.call(op, 'ipc_read', { fd: room.fd, wait: true, waitMs: 30_000 })) as {
      messages: Array<{ text: string }>;
    };
    const took = Date.now() - t0;
    assert.ok(raced, 'the write landed inside the look');
    assert.deepEqual(
      r.messages.map((m) => m.text),
      ['in the window'],
    );
    // Missed, the read would have slept its 30 s wait; heard, it looks again at once.
    assert.ok(took < 15_000, `the read returned after ${took} ms`);
  });
});
