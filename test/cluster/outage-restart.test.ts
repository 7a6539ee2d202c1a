import assert from 'node:assert/strict';
import { it } from 'node:test';
import { within } from '../crash/harness.ts';
import { forEachStore } from '../helpers/stores.ts';
import { echoProcesses, readUntil, spawnEcho } from './harness.ts';
import { proxiedPairs } from './proxied-pair.ts';

/**
 * Issue 26, item 5: after a database outage longer than the lease (the path to PostgreSQL
 * refused for 10 s, for both nodes) every session is live again with exactly one agent
 * process, on some live node, and every send acknowledged after the outage is answered. Both
 * nodes fence themselves during it and every lease looks expired when it ends: neither may
 * declare the other lost before it holds its own lease again, and each restarts (or hands
 * over) every session it owns.
 */
forEachStore(
  'cluster: no session is left without a process after a database outage',
  (target) => {
    const pair = proxiedPairs(target);

    it('a 10 s outage: every session live again with one process, every acknowledged send answered', async () => {
      // Both nodes reach PostgreSQL through the proxy.
      const { cluster: c, proxy, servers } = await pair([0, 1]);
      const agents: Array<{ id: string; pipeFd: number; s: (typeof servers)[number] }> = [];
      for (const [i, s] of servers.entries())
        for (const k of [1, 2]) agents.push({ ...(await spawnEcho(s, `outage-${i}-${k}`)), s });
      for (const g of agents) await g.s.until(g.id, (x) => x.status === 'idle', 20_000);
      const ids = agents.map((g) => g.id);

      proxy.refuse();
      await new Promise((r) => setTimeout(r, 10_000));
      proxy.forward();

      // Every session live again, with exactly one process, on a node that holds a lease.
      await within(60_000, 'every session idle with one agent process', async () => {
        const rows = await c.withStore((store) =>
          store.reader.selectFrom('sessions').select(['id', 'status']).where('id', 'in', ids).execute(),
        );
        const procs = echoProcesses(ids);
        return rows.every((r) => r.status === 'idle') && ids.every((id) => procs.get(id)?.length === 1);
      });
      // Every acknowledged send is answered (through the node each session was spawned on:
      // its fd is that operator's, whichever node runs the agent now).
      for (const g of agents) {
        await within(20_000, `a send to ${g.id} acknowledged`, async () => {
          try {
            await g.s.api('POST', `/v1/fds/${g.pipeFd}/write`, { message: `after ${g.id}` });
            return true;
          } catch {
            return false;
          }
        });
        await readUntil(g.s, g.pipeFd, `echo:after ${g.id}`, 20_000);
      }
      const once = echoProcesses(ids);
      for (const id of ids) assert.equal(once.get(id)?.length, 1, `${id}: one agent process`);
      for (const [i, s] of servers.entries())
        assert.ok(s.alive, `node ${i} alive:\n${s.output().slice(-2000)}`);
    });
  },
  { backends: ['postgres'] },
);
