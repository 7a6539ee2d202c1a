import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  fenceAfterMs,
  leaseCallMs,
  leaseMarginMs,
  renewEveryMs,
  takeoverGraceMs,
} from '../../src/cluster/lease-timing.ts';
import { sessionsToRun } from '../../src/cluster/own-sessions.ts';
import { takeOverLost } from '../../src/cluster/takeover.ts';
import type { Store } from '../../src/store/store.ts';
import { forEachStore } from '../helpers/stores.ts';
import { addSession } from './rows.ts';

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
      await addNode(store, 'gone', 1, until - leaseMs, until);
      await addNode(store, 'me', 1, 0, until * 2);
      const me = { id: 'me', epoch: 1 };
      const state = async () =>
        (
          await store.reader
            .selectFrom('nodes')
            .select('state')
            .where('id', '=', 'gone')
            .executeTakeFirstOrThrow()
        ).state;
      // Expired, but within the margin: it may still be ending its agents.
      assert.deepEqual(await takeOverLost(store, until + 1, me, grace), []);
      assert.deepEqual(await takeOverLost(store, until + grace, me, grace), []);
      assert.equal(await state(), 'live');
      // Past the lease plus the margin: lost, once.
      const r = await takeOverLost(store, until + grace + 1, me, grace);
      assert.deepEqual(
        r.map((x) => x.node),
        ['gone'],
      );
      assert.equal(await state(), 'lost');
    });

    it('a node whose own lease is not current declares nobody lost (issue 26, item 5)', async () => {
      const store = await target.open();
      const now = 1_000_000;
      const grace = takeoverGraceMs(3000);
      // Everyone's lease ran out long ago: what every node sees right after a database outage.
      await addNode(store, 'other', 4, 0, now - 10 * grace);
      await addNode(store, 'me', 2, 0, now - 5 * grace);
      const other = async () =>
        (
          await store.reader
            .selectFrom('nodes')
            .select('state')
            .where('id', '=', 'other')
            .executeTakeFirstOrThrow()
        ).state;
      // Its own lease expired: nothing is taken.
      assert.deepEqual(await takeOverLost(store, now, { id: 'me', epoch: 2 }, grace), []);
      // An epoch of its own that is no longer the current one: nothing either.
      await store.writer.write(async (tx) => {
        await tx.db
          .updateTable('nodes')
          .set({ lease_until: now * 2 })
          .where('id', '=', 'me')
          .execute();
      });
      assert.deepEqual(await takeOverLost(store, now, { id: 'me', epoch: 1 }, grace), []);
      assert.equal(await other(), 'live');
      // Renewed under its current epoch: now it may.
      const r = await takeOverLost(store, now, { id: 'me', epoch: 2 }, grace);
      assert.deepEqual(
        r.map((x) => x.node),
        ['other'],
      );
      assert.equal(await other(), 'lost');
    });

    it("a lost node's runner sessions go to a node their runner is connected to, or wait visibly (item 7)", async () => {
      const store = await target.open();
      const now = 1_000_000;
      const grace = takeoverGraceMs(3000);
      await addNode(store, 'dead', 1, 0, now - 2 * grace);
      // 'me' has no runner; 'gpu-host' has runner gpu connected (its renewal recorded it).
      await addNode(store, 'me', 1, 0, now * 2);
      await addNode(store, 'gpu-host', 1, 0, now * 2, ['command', 'runner:gpu']);
      for (const [id, runner] of [
        ['ses_1', 'runner:gpu'],
        ['ses_2', 'runner:gpu'],
        ['ses_3', 'runner:cpu'],
        ['ses_4', 'local'],
      ] as const)
        await addSession(store, id, 'dead', 1, { runner, status: 'idle' });
      const [r] = await takeOverLost(store, now, { id: 'me', epoch: 1 }, grace);
      // Local sessions round robin over the nodes with their runtime (ordered by id: gpu-host first).
      assert.deepEqual(r?.moved, { ses_1: 'gpu-host', ses_2: 'gpu-host', ses_3: null, ses_4: 'gpu-host' });
      const rows = await store.reader
        .selectFrom('sessions')
        .select(['id', 'status', 'suspend_reason', 'owner_node'])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        rows.map((x) => [x.id, x.status, x.suspend_reason]),
        [
          ['ses_1', 'suspended', 'node lost'],
          ['ses_2', 'suspended', 'node lost'],
          ['ses_3', 'suspended', 'node lost: waiting for runner:cpu to connect to a live node'],
          ['ses_4', 'suspended', 'node lost'],
        ],
      );
      // Who starts what: a node only the sessions it can run; runner cpu connecting to 'me' later
      // makes its waiting session 'me's to take.
      assert.deepEqual((await sessionsToRun(store, 'me', ['command'], [], '')).ids, []);
      assert.deepEqual((await sessionsToRun(store, 'gpu-host', ['command'], ['runner:gpu'], '')).ids.sort(), [
        'ses_1',
        'ses_2',
        'ses_4',
      ]);
      assert.deepEqual((await sessionsToRun(store, 'me', ['command'], ['runner:cpu'], '')).ids, ['ses_3']);
    });
  },
  { backends: ['postgres'] },
);

async function addNode(
  store: Store,
  id: string,
  epoch: number,
  heartbeatAt: number,
  leaseUntil: number,
  runtimes = ['command'],
) {
  await store.writer.write(async (tx) => {
    await tx.db
      .insertInto('nodes')
      .values({
        id,
        address: null,
        runtimes: JSON.stringify(runtimes),
        epoch,
        state: 'live',
        joined_at: 0,
        heartbeat_at: heartbeatAt,
        lease_until: leaseUntil,
      })
      .execute();
  });
}

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
