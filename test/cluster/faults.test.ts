import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { assertAckedInLog } from '../helpers/log-checks.ts';
import { describeOwnPostgres } from '../helpers/own-postgres.ts';
import { FAULTS, FaultRig } from './faults.ts';
import { lateWrites } from './write-log.ts';

/**
 * Issue 26's fault suite, on a PostgreSQL of its own (faults.ts): every fault once, in turn,
 * on one cluster under traffic — a node paused for 3 leases, pg_terminate_backend sweeps, a
 * fast restart of PostgreSQL, PostgreSQL stopped for 2 leases, a runner paused past its
 * heartbeat, node 0 cut off from PostgreSQL (blackholed) for 2 and for 5 leases. After each,
 * writes are served and every session is live with one process again (bounded, generously).
 * Then: every acknowledged room write is in the log once; no 250 ms sample saw two agent
 * processes for one session; no node wrote a row for a session after its lease ended (and the
 * session was taken from it); every acknowledged send to an agent was answered (runner agents
 * included, sends made during a fault too); no node or runner exited. Nodes never end each
 * other's agents (as on separate hosts): only the agents' own watchers do. Timings are
 * `npm run bench -- faults`.
 */
describeOwnPostgres('cluster: faults on a PostgreSQL of its own', (db) => {
  const rigs: FaultRig[] = [];
  after(async () => {
    for (const r of rigs) await r.cleanup();
  });

  it('every fault once: nothing acknowledged lost or doubled, never two processes, no late write', async () => {
    const rig = await FaultRig.start(db(), rigs);
    for (const fault of FAULTS) {
      const r = await rig.inject(fault);
      console.log(`# ${fault}: writes again after ${r.writesMs} ms, sessions live after ${r.liveMs} ms`);
      assert.deepEqual(rig.casualties(), [], `after ${fault}`);
    }
    const unanswered = await rig.drain();
    const acked = rig.acked;
    assert.ok(acked.length > 100, `the writers got through (${acked.length})`);
    // Every check made, then all reported at once: a break shows everything it broke.
    const found = await rig.cluster.withStore(async (store) => {
      await assertAckedInLog(store, acked);
      const rows = await store.reader
        .selectFrom('events')
        .select(['payload'])
        .where('type', '=', 'stream.message')
        .execute();
      const counts = new Map<string, number>();
      for (const r of rows) {
        const t = JSON.parse(r.payload).text as string;
        counts.set(t, (counts.get(t) ?? 0) + 1);
      }
      return {
        twoProcessesInASample: rig.doubled(),
        ackedWritesNotOnceInTheLog: acked.filter((m) => counts.get(m.text) !== 1).map((m) => m.text),
        rowsWrittenAfterTheLeaseEnded: await lateWrites(store, 'faults'),
        acknowledgedSendsNeverAnswered: unanswered,
        exitedNodesOrRunners: rig.casualties(),
      };
    });
    assert.deepEqual(found, {
      twoProcessesInASample: [],
      ackedWritesNotOnceInTheLog: [],
      rowsWrittenAfterTheLeaseEnded: [],
      acknowledgedSendsNeverAnswered: [],
      exitedNodesOrRunners: [],
    });
  });
});
