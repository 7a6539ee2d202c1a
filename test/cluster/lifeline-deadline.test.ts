import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { type Server, sleep, within } from '../crash/harness.ts';
import { forEachStore } from '../helpers/stores.ts';
import { Cluster, echoProcesses, readUntil, spawnEcho } from './harness.ts';

/**
 * Fencing on the node's own clock, while the node cannot act at all (docs/scaling.md): node A
 * is paused (SIGSTOP) with an agent running. Its agent's lifeline watcher gets no beat by A's
 * lease deadline and ends it — before node B may take the session over, so B's takeover (which
 * ends a lost node's process records on the same host after it commits) has nothing left to
 * end. Sampled from /proc every 50 ms: never two processes for the session.
 */
forEachStore(
  'cluster: a paused node’s agents end on their own deadline',
  (target) => {
    const clusters: Cluster[] = [];
    after(async () => {
      for (const c of clusters) await c.cleanup();
    });

    it('the agent is gone before the other node takes its session, never two at once', async () => {
      const loc = target.location();
      await target.prepare(loc);
      const c = new Cluster(loc, 2);
      clusters.push(c);
      const [a, b] = (await c.startAll()) as [Server, Server];
      const g = await spawnEcho(a, 'echo-on-a');
      await a.until(g.id, (s) => s.status === 'idle', 20_000);
      const [pidOnA] = echoProcesses([g.id]).get(g.id) ?? [];
      assert.ok(pidOnA, 'the agent runs on A');
      // Beaten past several lease windows: a healthy node's agents are kept.
      await sleep(4000);
      assert.deepEqual(echoProcesses([g.id]).get(g.id), [pidOnA], 'A’s agent still runs, beaten');

      const samples: Array<{ pids: number[]; owner: string | null }> = [];
      a.child.kill('SIGSTOP');
      try {
        await c.withStore((store) =>
          within(30_000, 'the session running on B', async () => {
            // /proc first, then the row: a row still A's was read after the processes were.
            const pids = echoProcesses([g.id]).get(g.id) ?? [];
            const row = await store.reader
              .selectFrom('sessions')
              .select(['owner_node', 'status'])
              .where('id', '=', g.id)
              .executeTakeFirstOrThrow();
            samples.push({ pids, owner: row.owner_node ?? null });
            await sleep(50);
            return row.owner_node === c.nodes[1]!.nodeId && pids.length === 1 && pids[0] !== pidOnA;
          }),
        );
      } finally {
        a.child.kill('SIGCONT');
      }
      const twice = samples.filter((s) => s.pids.length > 1);
      assert.deepEqual(twice, [], 'two processes for one session in a sample');
      const gone = samples.findIndex((s) => !s.pids.includes(pidOnA));
      assert.ok(gone >= 0, 'A’s agent ended');
      assert.equal(
        samples[gone]!.owner,
        c.nodes[0]!.nodeId,
        'A’s agent was gone while the session was still A’s: its own watcher ended it, not B',
      );
      // And the session answers on B.
      await b.api('POST', `/v1/sessions/${g.id}/send`, { text: 'after-the-pause' });
      await readUntil(b, g.pipeFd, 'echo:after-the-pause');
    });
  },
  { backends: ['postgres'] },
);
