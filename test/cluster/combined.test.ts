import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { alive, type Server, sleep, within } from '../crash/harness.ts';
import { assertAckedInLog, assertGapFree, statusChanges } from '../helpers/log-checks.ts';
import { forEachStore } from '../helpers/stores.ts';
import { echoScript, type RunnerProcess, startRunner } from '../runners/helpers.ts';
import { Cluster, echoProcesses, readUntil, roomWriters, spawnEcho, tearDown } from './harness.ts';

/** A session counts as live again within this (generous, for a loaded machine). */
const LIVE_AGAIN_MS = 60_000;
const LIVE = new Set(['idle', 'running']);

interface Agent {
  id: string;
  pipeFd: number;
  /** The node it was started through (and, for a runner's, the node the runner is connected to). */
  node: number;
  where: 'local' | 'r1' | 'r2';
  kind: 'command' | 'script';
}

/**
 * The cluster on one machine: one PostgreSQL schema, three `warren serve` processes,
 * two `warren runner` processes (r1 connected to B, r2 to C), command and script agents on
 * every node and on both runners, pipes whose ends are on different nodes, a room written by
 * eight writers through all three nodes and read through C. Mid-traffic node A is SIGKILLed,
 * then runner r2 (a supervisor starts it again). Nothing acknowledged is lost, the reader
 * on C got it all in seq order, seqs have no gap, every session that was live is live again
 * once within a bound (the others never stopped), and exactly one agent process runs per
 * command session: none orphaned, none doubled.
 */
forEachStore(
  'cluster: three nodes and two runners, a node and a runner SIGKILLed mid-traffic',
  (target) => {
    const clusters: Cluster[] = [];
    const runners: RunnerProcess[] = [];
    const sessions: string[] = [];
    after(() => tearDown(clusters, runners, sessions));

    it('loses nothing acknowledged; every live session is live again once, one process each', async () => {
      const c = new Cluster(target.location(), 3);
      clusters.push(c);
      const servers = await c.startAll();
      const [a, b, cc] = servers as [Server, Server, Server];
      const ids = c.nodes.map((n) => n.nodeId);

      // Two runners, each connected out to a node that stays up.
      const token = async (name: string) =>
        (await a.api<{ token: string }>('POST', '/v1/runners', { name })).token;
      const t1 = await token('r1');
      const t2 = await token('r2');
      runners.push(await startRunner({ url: b.url, token: t1, name: 'r1' }));
      let r2 = await startRunner({ url: cc.url, token: t2, name: 'r2' });
      runners.push(r2);

      // A command and a script agent on each node, and on each runner (through its node).
      const agents: Agent[] = [];
      const place = [
        { node: 0, where: 'local' },
        { node: 1, where: 'local' },
        { node: 2, where: 'local' },
        { node: 1, where: 'r1' },
        { node: 2, where: 'r2' },
      ] as const;
      for (const p of place) {
        const env = p.where === 'local' ? {} : { environmentId: `runner:${p.where}` };
        const cmd = await spawnEcho(servers[p.node]!, `echo-${p.where}-${p.node}`, env);
        const scr = await spawnEcho(servers[p.node]!, `script-${p.where}-${p.node}`, {
          ...echoScript(),
          ...env,
        });
        agents.push({ ...cmd, ...p, kind: 'command' }, { ...scr, ...p, kind: 'script' });
      }
      sessions.push(...agents.map((g) => g.id));
      const commands = agents.filter((g) => g.kind === 'command');
      const rows = () =>
        c.withStore((s) =>
          s.reader
            .selectFrom('sessions')
            .select(['id', 'status', 'owner_node'])
            .where('id', 'in', sessions)
            .execute(),
        );
      await within(30_000, 'every agent live', async () => (await rows()).every((r) => LIVE.has(r.status)));
      await within(15_000, 'one process per command agent', () => {
        const procs = echoProcesses(sessions);
        return commands.every((g) => procs.get(g.id)?.length === 1);
      });
      const before = echoProcesses(sessions);

      // Pipes across nodes: input through the next node, the answer read through the one after.
      const roundTrip = async (g: Agent, text: string, via: number, readVia: number) => {
        await servers[via]!.api('POST', `/v1/sessions/${g.id}/send`, { text });
        // A script answers `script got <text>`, which ends with the text.
        const answer = g.kind === 'command' ? `echo:${text}` : text;
        await readUntil(servers[readVia]!, g.pipeFd, answer, 20_000);
      };
      for (const g of agents) await roundTrip(g, `hello-${g.id}`, (g.node + 1) % 3, (g.node + 2) % 3);

      // A room: created on B, written by eight writers through every node, read through C.
      const room = await b.api<{ fd: number }>('POST', '/v1/streams', { name: 'traffic', selfEcho: true });
      const read: Array<{ text: string; seq: number }> = [];
      let reading = true;
      const reader = async () => {
        while (reading) {
          const r = await cc.api<{ messages: Array<{ text: string; seq: number }> }>(
            'POST',
            `/v1/fds/${room.fd}/read`,
            { wait: true, waitMs: 1000, limit: 1000 },
          );
          read.push(...r.messages.map((m) => ({ text: m.text, seq: m.seq })));
        }
      };
      const writers = roomWriters(servers, room.fd, 8);
      const { acked } = writers;
      const readerDone = reader();
      await within(15_000, 'traffic flowing', () => acked.length >= 40);

      // Node A dies mid-traffic: its sessions are handed to B and C and run there.
      const onA = agents.filter((g) => g.node === 0);
      const killedAt = Date.now();
      await a.signal('SIGKILL');
      await within(LIVE_AGAIN_MS, "A's sessions live on B or C", async () =>
        (await rows())
          .filter((r) => onA.some((g) => g.id === r.id))
          .every((r) => LIVE.has(r.status) && r.owner_node !== ids[0]),
      );
      console.log(`# node A SIGKILLed: its sessions live elsewhere after ${Date.now() - killedAt} ms`);

      // Then runner r2: its sessions are suspended; started again, it reanimates them.
      const onR2 = agents.filter((g) => g.where === 'r2');
      const r2Killed = Date.now();
      await r2.crash();
      await within(30_000, "r2's sessions suspended", async () =>
        (await rows()).filter((r) => onR2.some((g) => g.id === r.id)).every((r) => r.status === 'suspended'),
      );
      r2 = await startRunner({ url: cc.url, token: t2, name: 'r2' });
      runners.push(r2);
      await within(LIVE_AGAIN_MS, "r2's sessions live again", async () =>
        (await rows()).filter((r) => onR2.some((g) => g.id === r.id)).every((r) => LIVE.has(r.status)),
      );
      console.log(`# runner r2 SIGKILLed and restarted: its sessions live after ${Date.now() - r2Killed} ms`);

      await sleep(500);
      await writers.stop();
      assert.ok(acked.length > 50, `the writers got through (${acked.length} acknowledged)`);
      // The reader on C gets every acknowledged message (bounded), then stops.
      const want = new Set(acked.map((m) => m.seq));
      await within(30_000, 'the reader on C got every acknowledged message', () =>
        [...want].every((seq) => read.some((m) => m.seq === seq)),
      );
      reading = false;
      await readerDone;
      for (let i = 1; i < read.length; i++)
        assert.ok(
          read[i]!.seq > read[i - 1]!.seq,
          `read in seq order, once each (${read[i - 1]!.seq}, ${read[i]!.seq})`,
        );
      const bySeqRead = new Map(read.map((m) => [m.seq, m.text]));
      for (const m of acked) assert.equal(bySeqRead.get(m.seq), m.text, `C read ${m.text} at ${m.seq}`);

      await c.withStore(async (s) => {
        // Every acknowledged message is in the log at its seq; the log has no gap.
        await assertAckedInLog(s, acked);
        await assertGapFree(s);

        // Suspended and resumed exactly once if it was on A or r2; never suspended otherwise.
        for (const g of agents) {
          const st = await statusChanges(s, g.id);
          const suspended = st.filter((e) => e.to === 'suspended');
          const resumed = st.filter((e) => e.reason === 'resumed');
          const moved = g.node === 0 || g.where === 'r2';
          assert.equal(suspended.length, moved ? 1 : 0, `${g.id} (${g.where} on ${g.node}): suspensions`);
          assert.equal(resumed.length, moved ? 1 : 0, `${g.id} (${g.where} on ${g.node}): resumes`);
          if (g.node === 0) assert.equal(suspended[0]?.reason, 'node lost');
        }
      });
      const now = await rows();
      for (const g of agents) {
        const r = now.find((x) => x.id === g.id)!;
        assert.ok(LIVE.has(r.status), `${g.id} is live (${r.status})`);
        assert.notEqual(r.owner_node, ids[0], `${g.id} is not owned by the dead node`);
      }

      // No orphan, no duplicate: the old processes of A's and r2's agents are gone, and each
      // command session has exactly one agent process, wherever it runs now.
      const old = [...onA, ...onR2]
        .filter((g) => g.kind === 'command')
        .flatMap((g) => before.get(g.id) ?? []);
      assert.equal(old.length, 2);
      await within(15_000, 'the old agent processes ended', () => old.every((p) => !alive(p)));
      await within(15_000, 'one agent process per command session', () => {
        const procs = echoProcesses(sessions);
        return commands.every((g) => procs.get(g.id)?.length === 1) && procs.size === commands.length;
      });
      assert.deepEqual(await c.nodes[0]!.marked(), [], 'nothing of A is left');
      const after = echoProcesses(sessions);
      for (const g of commands.filter((x) => x.node !== 0 && x.where !== 'r2'))
        assert.deepEqual(after.get(g.id), before.get(g.id), `${g.id} kept its process`);

      // The moved agents answer, through any live node.
      for (const g of [...onA, ...onR2]) await roundTrip(g, `again-${g.id}`, 1, 2);
    });
  },
  { backends: ['postgres'] },
);
