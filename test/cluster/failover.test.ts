import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { alive, type Server, sleep, within } from '../crash/harness.ts';
import { assertAckedInLog, assertGapFree, statusChanges } from '../helpers/log-checks.ts';
import { forEachStore } from '../helpers/stores.ts';
import { Cluster, echoes, readUntil, roomWriters, spawnEcho } from './harness.ts';

/**
 * Three nodes on one PostgreSQL, agents on each, eight writers on a room through all of them;
 * one node is SIGKILLed mid-traffic. Nothing acknowledged is lost, seqs have no gap, the
 * killed node's sessions run again elsewhere exactly once within a bound, the others are
 * untouched, and no process is orphaned or duplicated.
 */
forEachStore(
  'cluster: a node SIGKILLed mid-traffic',
  (target) => {
    const clusters: Cluster[] = [];
    after(async () => {
      for (const c of clusters) await c.cleanup();
    });

    it('loses nothing acknowledged; its sessions are live again on the others, once each', async () => {
      const c = new Cluster(target.location(), 3);
      clusters.push(c);
      const servers = await c.startAll();
      const [a, b, cc] = servers as [Server, Server, Server];
      const ids = [c.nodes[0]!.nodeId, c.nodes[1]!.nodeId, c.nodes[2]!.nodeId];

      // Two agents per node, each started through its node.
      const agents: Array<{ id: string; pipeFd: number; node: number }> = [];
      for (let n = 0; n < 3; n++) {
        for (let j = 0; j < 2; j++)
          agents.push({ ...(await spawnEcho(servers[n]!, `echo-${n}-${j}`)), node: n });
      }
      for (const g of agents) await servers[g.node]!.until(g.id, (s) => s.status === 'idle', 20_000);
      const onA = agents.filter((g) => g.node === 0);
      const oldPids = await c.nodes[0]!.marked();
      assert.equal(echoes(oldPids), 2, 'A runs its two agents');

      // Eight writers on one room, through every node; a writer whose node died moves on.
      const room = await b.api<{ fd: number }>('POST', '/v1/streams', { name: 'traffic', selfEcho: true });
      const writers = roomWriters(servers, room.fd, 8);
      const { acked } = writers;
      await sleep(800);
      const killedAt = Date.now();
      await a.signal('SIGKILL');

      // Its sessions are handed to B and C and run there: the failover time.
      const failover = await within(15_000, "A's sessions running on B or C", async () => {
        const rows = await c.withStore((s) =>
          s.reader
            .selectFrom('sessions')
            .select(['id', 'status', 'owner_node'])
            .where(
              'id',
              'in',
              onA.map((g) => g.id),
            )
            .execute(),
        );
        return rows.every((r) => (r.status === 'idle' || r.status === 'running') && r.owner_node !== ids[0]);
      });
      console.log(
        `# failover: A's sessions running elsewhere ${Date.now() - killedAt} ms after its SIGKILL (${failover} ms of polling)`,
      );
      await sleep(500);
      await writers.stop();
      assert.ok(acked.length > 50, `the writers got through (${acked.length} acknowledged)`);

      await c.withStore(async (s) => {
        // Every acknowledged message is in the log, at the seq it was acknowledged with; no gap.
        await assertAckedInLog(s, acked);
        await assertGapFree(s);

        // Each of A's sessions: suspended once for the lost node, resumed once, on B or C.
        for (const g of onA) {
          const st = await statusChanges(s, g.id);
          assert.equal(st.filter((e) => e.reason === 'node lost').length, 1, `${g.id}: one handover`);
          assert.equal(st.filter((e) => e.reason === 'resumed').length, 1, `${g.id}: resumed once`);
        }
        // The others were left alone.
        for (const g of agents.filter((x) => x.node !== 0)) {
          const sus = await s.reader
            .selectFrom('events')
            .select('seq')
            .where('session_id', '=', g.id)
            .where('type', '=', 'session.status')
            .where('payload', 'like', '%"to":"suspended"%')
            .execute();
          assert.equal(sus.length, 0, `${g.id} on a live node was never suspended`);
        }
        const lost = await s.reader
          .selectFrom('nodes')
          .select('state')
          .where('id', '=', ids[0]!)
          .executeTakeFirstOrThrow();
        assert.equal(lost.state, 'lost');
      });

      // No orphan: A's processes are gone. No duplicate: one process per session, on B and C.
      await within(5000, "A's agent processes ended", () => oldPids.every((p) => !alive(p)));
      await within(5000, 'six agents, one process each, on B and C', async () => {
        const procs = await c.withStore((s) => s.reader.selectFrom('agent_procs').selectAll().execute());
        const live = procs.filter((p) => alive(p.pid));
        const bc = [...(await c.nodes[1]!.marked()), ...(await c.nodes[2]!.marked())];
        return (
          live.length === 6 &&
          new Set(live.map((p) => p.session_id)).size === 6 &&
          echoes(bc) === 6 &&
          (await c.nodes[0]!.marked()).length === 0
        );
      });

      // The taken-over agents answer, through any node.
      for (const g of onA) {
        await cc.api('POST', `/v1/sessions/${g.id}/send`, { text: `after-${g.id}` });
        await readUntil(b, g.pipeFd, `echo:after-${g.id}`);
      }
    });
  },
  { backends: ['postgres'] },
);
