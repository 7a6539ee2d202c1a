import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommitWaits } from '../../src/plugins/turns/wait.ts';
import { watchedClock } from '../helpers/clock.ts';

/**
 * A stopping server answers its long polls (`bridge_await_turn`): the turns plugin's stop
 * closes its commit waits. Their timers are kept alive on purpose while the server runs; left
 * armed, one held a finished test file's process for its whole 30 s (found by the fuzz test).
 */
describe('commit waits end when the plugin stops', () => {
  it('close answers every armed wait as timed out, and a wait armed after answers at once', async () => {
    const clock = watchedClock();
    const waits = new CommitWaits(clock);
    const a = waits.arm(() => true, 30_000);
    const b = waits.next(() => true, 30_000);
    waits.close();
    assert.deepEqual(await Promise.all([a.fired, b]), [false, false]);
    assert.equal(await waits.next(() => true, 30_000), false);
    // Ended by close, not by their timers: none ran out, and none is left to keep the process up.
    assert.ok(
      clock.timers.every((t) => !t.fired),
      'no wait ran out',
    );
  });
});
