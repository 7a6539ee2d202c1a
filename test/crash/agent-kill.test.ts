import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';
import { alive, groups, Node, sleepers, spawnForkers, within } from './harness.ts';

/**
 * A single agent killed from outside warren (SIGKILL, SIGTERM to its process) is a drop, not
 * a crash: its session is `suspended` with the reason, its children are ended, the other
 * agents are untouched, and `session_open` (or an operator's write to it) brings it back as
 * one process group.
 */
forEachStore('agent killed from outside', (target) => {
  const nodes: Node[] = [];
  after(async () => {
    for (const n of nodes) await n.cleanup();
  });

  it('suspends its session, ends its children, spares the others; open or a write reanimates it once', async () => {
    const node = new Node(target);
    nodes.push(node);
    const s = await node.start();
    const ids = await spawnForkers(s, node, 4);
    const recs = await node.records();
    const pidOf = (id: string) => recs.find((r) => r.session_id === id)!.pid;
    const markOf = async (id: string) => (await groups(node)).byPgid.get(pidOf(id))!;
    const victims = [
      { id: ids[0]!, signal: 'SIGKILL' as const },
      { id: ids[1]!, signal: 'SIGTERM' as const },
    ];
    const spared = ids.slice(2);
    const before = await groups(node);
    const victimPids = new Map<string, number[]>();
    for (const v of victims) {
      const mark = await markOf(v.id);
      victimPids.set(
        v.id,
        before.pids.filter((p) => before.markOf.get(p) === mark),
      );
    }

    for (const v of victims) process.kill(pidOf(v.id), v.signal);
    for (const v of victims) {
      const got = await s.until(v.id, (x) => x.status !== 'running');
      assert.equal(got.status, 'suspended', `${v.signal}: suspended, not ${got.endReason}`);
      assert.equal(got.suspendReason, `agent process ended by ${v.signal} from outside warren`);
      await within(20_000, `${v.signal}: the agent's children end`, () =>
        victimPids.get(v.id)!.every((p) => !alive(p)),
      );
    }
    for (const id of spared) {
      assert.equal((await s.session(id)).status, 'running', 'the others run on');
      assert.ok(alive(pidOf(id)), 'with the same process');
    }

    // Open is reanimate; so is an operator's write to its stdin (queued, then delivered).
    const r = await s.api<{ reanimated: boolean }>('POST', `/v1/sessions/${victims[0]!.id}/open`, {});
    assert.equal(r.reanimated, true);
    await s.api('POST', `/v1/sessions/${victims[1]!.id}/send`, { text: 'wake up' });
    for (const v of victims) await s.until(v.id, (x) => x.status === 'running');
    await within(15_000, 'reanimated agents with their children', async () => (await sleepers(node)) >= 8);
    await s.quiescent(); // a duplicate start is in the process table by now
    const now = await groups(node);
    assert.equal(now.pgids.size, 4, 'one process group per live session');
    const recsNow = await node.records();
    assert.equal(recsNow.length, 4, 'one record per live session');
    for (const id of spared) assert.equal(recsNow.find((r) => r.session_id === id)!.pid, pidOf(id));
    for (const v of victims) {
      const starts = (await s.events(v.id)).filter(
        (e) => e.type === 'session.status' && e.payload.to === 'running' && e.payload.from === 'suspended',
      );
      assert.equal(starts.length, 1, `${v.id} reanimated exactly once`);
    }
  });
});
