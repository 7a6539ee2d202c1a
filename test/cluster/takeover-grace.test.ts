import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  fenceAfterMs,
  leaseCallMs,
  leaseMarginMs,
  renewEveryMs,
  takeoverGraceMs,
} from '../../src/cluster/lease-timing.ts';
import { takeOverLost } from '../../src/cluster/takeover.ts';
import { forEachStore } from '../helpers/stores.ts';

/**
 * Takeover waits the lease plus the margin (issue 26): a node fences itself on its own clock
 * the margin *before* its lease runs out, and no other node takes its sessions until the
 * margin *after*, so its agents are ended first. `now` is passed in: no wall time here.
 */
forEachStore(
  'cluster: takeover waits the lease plus the margin',
  (target) => {
    it('a node whose lease ran out less than the margin ago is not declared lost', async () => {
      const store = await target.open();
      const leaseMs = 3000;
      const grace = takeoverGraceMs(leaseMs);
      const until = 1_000_000;
      await store.writer.write(async (tx) => {
        await tx.db
          .insertInto('nodes')
          .values({
            id: 'gone',
            address: null,
            runtimes: '["command"]',
            epoch: 1,
            state: 'live',
            joined_at: 0,
            heartbeat_at: until - leaseMs,
            lease_until: until,
          })
          .execute();
      });
      const state = async () =>
        (
          await store.reader
            .selectFrom('nodes')
            .select('state')
            .where('id', '=', 'gone')
            .executeTakeFirstOrThrow()
        ).state;
      // Expired, but within the margin: it may still be ending its agents.
      assert.deepEqual(await takeOverLost(store, until + 1, 'me', grace), []);
      assert.deepEqual(await takeOverLost(store, until + grace, 'me', grace), []);
      assert.equal(await state(), 'live');
      // Past the lease plus the margin: lost, once.
      const r = await takeOverLost(store, until + grace + 1, 'me', grace);
      assert.deepEqual(
        r.map((x) => x.node),
        ['gone'],
      );
      assert.equal(await state(), 'lost');
    });
  },
  { backends: ['postgres'] },
);

it('lease timing: the node fences before the lease ends, the others wait past it, calls fit inside', () => {
  for (const leaseMs of [500, 1000, 3000, 10_000, 60_000]) {
    const m = leaseMarginMs(leaseMs);
    assert.ok(m >= 250 || m === leaseMs / 2, `margin ${m} at lease ${leaseMs}`);
    assert.ok(m >= leaseMs / 10 || m === Math.floor(leaseMs / 2));
    assert.ok(fenceAfterMs(leaseMs) < leaseMs, 'fences before its lease ends');
    assert.ok(leaseMs + takeoverGraceMs(leaseMs) >= leaseMs + m, 'takeover waits the lease plus the margin');
    // Renewed several times before it fences: one slow round trip does not fence a node
    // (at the smallest leases, where the 250 ms margin is half the lease, at least twice).
    const tries = fenceAfterMs(leaseMs) / renewEveryMs(leaseMs, leaseMs);
    assert.ok(tries >= (leaseMs >= 1000 ? 3 : 2), `${tries} renewals before fencing at lease ${leaseMs}`);
    // A call right after a renewal ends well before the node must fence; none outlasts the window.
    const window = fenceAfterMs(leaseMs);
    for (const left of [window, window / 2, 1, 0, -5]) {
      const d = leaseCallMs(leaseMs, left);
      assert.ok(d > 0 && d <= window / 2, `deadline ${d} with ${left} left`);
    }
  }
});
