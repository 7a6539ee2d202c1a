import assert from 'node:assert/strict';
import { it } from 'node:test';
import { within } from '../crash/harness.ts';
import { forEachStore } from '../helpers/stores.ts';
import { echoProcesses, FAST, readUntil, spawnEcho } from './harness.ts';
import { proxiedPairs } from './proxied-pair.ts';
import { recordWrites, writesAfter } from './write-log.ts';

/**
 * Issue 26, item 4 with real nodes: node 0 reaches PostgreSQL through a proxy that is
 * blackholed past its lease while its agents are busy, so what it sent just before the cut
 * (agent output, events, cursor flushes, session updates) waits in the proxy; node 1 declares
 * it lost and takes its sessions; then the path heals and everything that waited flows on.
 * Triggers record which node's connection wrote each events/fds/sessions row (its
 * application_name) and when: no row is written by node 0 for a moved session after its lease
 * ended. Each moved session then runs on node 1 with exactly one agent process and answers.
 */
forEachStore(
  'cluster: a node that lost its sessions has its late writes refused',
  (target) => {
    const pair = proxiedPairs(target);

    it('blackholed past its lease, healed: nothing it wrote for a moved session lands', async () => {
      // Only node 0 reaches PostgreSQL through the proxy.
      const {
        cluster: c,
        proxy,
        servers: [a, b],
        schema,
      } = await pair([0]);
      const n0 = c.nodes[0]!.nodeId;
      const n1 = c.nodes[1]!.nodeId;
      await c.withStore((store) => recordWrites(store, schema));
      const agents = [await spawnEcho(a, 'late-1'), await spawnEcho(a, 'late-2')];
      for (const g of agents) await a.until(g.id, (x) => x.status === 'idle', 20_000);
      const ids = agents.map((g) => g.id);

      // Busy through node 1 while node 0 is cut: node 0's agents answer into a path that holds it all.
      for (const g of agents) await b.api('POST', `/v1/fds/${g.pipeFd}/write`, { message: 'before the cut' });
      proxy.blackhole();
      let leaseEnd = 0;
      try {
        // Takeover comes a lease and its margin after the cut; the bound is for a loaded CI
        // machine (it once took over 10 leases there), and a miss shows what node 1 logged.
        await within(20 * FAST.cluster.leaseMs, 'node 1 declared node 0 lost', () =>
          c.withStore(async (store) => {
            const r = await store.reader
              .selectFrom('nodes')
              .select(['state', 'lease_until'])
              .where('id', '=', n0)
              .executeTakeFirstOrThrow();
            leaseEnd = Number(r.lease_until);
            return r.state === 'lost';
          }),
        ).catch((error: Error) => {
          throw new Error(`${error.message}\nnode 1:\n${b.output().slice(-3000)}`);
        });
      } finally {
        proxy.forward();
      }
      // Node 1 runs both now; every late write of node 0 has had time to arrive and be refused.
      await within(30_000, 'the moved sessions run on node 1 with one process each', async () => {
        const rows = await c.withStore((store) =>
          store.reader
            .selectFrom('sessions')
            .select(['owner_node', 'status'])
            .where('id', 'in', ids)
            .execute(),
        );
        const procs = echoProcesses(ids);
        return (
          rows.every((r) => r.owner_node === n1 && r.status === 'idle') &&
          ids.every((id) => procs.get(id)?.length === 1)
        );
      });
      for (const g of agents) {
        await b.api('POST', `/v1/fds/${g.pipeFd}/write`, { message: 'after the heal' });
        await readUntil(b, g.pipeFd, 'after the heal', 20_000);
      }
      await within(30_000, 'node 0 is back (a new epoch)', async () => {
        const h = (await (await fetch(`${a.url}/healthz`)).json()) as { ok: boolean };
        return h.ok;
      });
      const late = await c.withStore((store) => writesAfter(store, schema, n0, ids, leaseEnd));
      assert.deepEqual(late, [], `rows node 0 wrote for moved sessions after its lease ended (${leaseEnd})`);
      const once = echoProcesses(ids);
      for (const id of ids) assert.equal(once.get(id)?.length, 1, `${id}: one agent process`);
      assert.ok(a.alive && b.alive);
    });
  },
  { backends: ['postgres'] },
);
