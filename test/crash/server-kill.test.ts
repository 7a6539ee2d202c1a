import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';
import { alive, checkRestart, Node, spawnForkers, within } from './harness.ts';

/**
 * No orphaned or duplicated agent processes: a real server runs five `command` agents that
 * fork children; the server is SIGKILLed; within 5 s nothing of that run is alive; a restart
 * on the same data runs exactly one process group per live session, each resumed once.
 */

forEachStore('server SIGKILL', (target) => {
  const nodes: Node[] = [];
  after(async () => {
    for (const n of nodes) await n.cleanup();
  });

  it('ends every agent process within 5 s; a restart resumes each session once, one group each', async () => {
    const node = new Node(target);
    nodes.push(node);
    const s1 = await node.start();
    const ids = await spawnForkers(s1, node, 5);
    const before = await node.marked();
    const recs = await node.records();
    assert.equal(recs.length, 5, 'every agent group is recorded');
    for (const r of recs) assert.ok(before.includes(r.pid), `recorded pid ${r.pid} carries the mark`);

    await s1.signal('SIGKILL');
    const took = await within(5000, 'no agent process of the killed run alive', async () => {
      if ((await node.marked()).length > 0) return false;
      return before.every((p) => !alive(p)) && recs.every((r) => !alive(r.pid));
    });
    console.log(`# agents gone ${took} ms after the server's SIGKILL`);

    const s2 = await node.start();
    await checkRestart(s2, node, ids, before);
    await s2.signal('SIGKILL');
    await within(5000, 'second run gone too', async () => (await node.marked()).length === 0);
  });
});
