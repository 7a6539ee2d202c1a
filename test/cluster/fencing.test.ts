import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { alive, type Server, sleep, within } from '../crash/harness.ts';
import { forEachStore } from '../helpers/stores.ts';
import { Cluster, echoes, readUntil, spawnEcho } from './harness.ts';
import { ownerOf } from './rows.ts';
import { recordWrites, writesAfter } from './write-log.ts';

/**
 * A node that stalls (SIGSTOP) past its lease is declared lost and its sessions are handed
 * on; when it comes back (SIGCONT) it finds its lease gone: it is fenced — it ends what it
 * still runs, writes nothing for those sessions, and joins again as a new epoch.
 */
forEachStore(
  'cluster: a stalled node comes back',
  (target) => {
    const clusters: Cluster[] = [];
    after(async () => {
      for (const c of clusters) await c.cleanup();
    });

    it('is fenced: its sessions stay with the node that took them, one process each', async () => {
      const loc = target.location();
      await target.prepare(loc);
      const c = new Cluster(loc, 2);
      clusters.push(c);
      const [a] = (await c.startAll()) as [Server, Server];
      const g = await spawnEcho(a, 'echo-on-a');
      await a.until(g.id, (s) => s.status === 'idle', 20_000);
      await c.withStore((store) => recordWrites(store, loc.schema!));
      const nodeA = () =>
        c.withStore((s) =>
          s.reader
            .selectFrom('nodes')
            .selectAll()
            .where('id', '=', c.nodes[0]!.nodeId)
            .executeTakeFirstOrThrow(),
        );
      const epochBefore = Number((await nodeA()).epoch);

      // Its agent busy as it stalls: its reply (a call through A) and its reports wait in A.
      await a.api('POST', `/v1/sessions/${g.id}/send`, { text: 'as-it-stalls' });
      a.child.kill('SIGSTOP');
      let leaseEnd = 0;
      try {
        await within(15_000, 'the session taken over by B', async () => {
          const r = await ownerOf(c, g.id);
          return r.owner_node === c.nodes[1]!.nodeId && (r.status === 'idle' || r.status === 'running');
        });
        leaseEnd = Number((await nodeA()).lease_until);
      } finally {
        a.child.kill('SIGCONT');
      }
      // Back: its heartbeat finds the lease gone; it rejoins as a new epoch.
      await within(10_000, 'A fenced and joined again', async () => {
        const n = await c.withStore((s) =>
          s.reader
            .selectFrom('nodes')
            .selectAll()
            .where('id', '=', c.nodes[0]!.nodeId)
            .executeTakeFirstOrThrow(),
        );
        return n.state === 'live' && Number(n.epoch) > epochBefore;
      });
      assert.match(a.output(), /node fenced/);
      await sleep(500);
      // One process for the session, on B; nothing of A's left.
      await within(5000, 'one agent process, on B', async () => {
        const procs = await c.withStore((s) => s.reader.selectFrom('agent_procs').selectAll().execute());
        return (
          procs.filter((p) => alive(p.pid)).length === 1 &&
          echoes(await c.nodes[1]!.marked()) === 1 &&
          echoes(await c.nodes[0]!.marked()) === 0
        );
      });
      const row = await c.withStore((s) =>
        s.reader.selectFrom('sessions').selectAll().where('id', '=', g.id).executeTakeFirstOrThrow(),
      );
      assert.equal(row.owner_node, c.nodes[1]!.nodeId, 'still B’s: the fenced node wrote nothing for it');
      assert.notEqual(row.status, 'stopped');
      // Nothing A had in hand when it stalled (its agent's reply, reports, cursor flushes) landed
      // for the session after its lease ended (issue 26, item 4).
      const late = await c.withStore((s) =>
        writesAfter(s, loc.schema!, c.nodes[0]!.nodeId, [g.id], leaseEnd),
      );
      assert.deepEqual(late, [], `rows A wrote for the session after its lease ended (${leaseEnd})`);
      // And it answers, through the node that came back.
      await a.api('POST', `/v1/sessions/${g.id}/send`, { text: 'still-here' });
      await readUntil(a, g.pipeFd, 'echo:still-here');
    });
  },
  { backends: ['postgres'] },
);
