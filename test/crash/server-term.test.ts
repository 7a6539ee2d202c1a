import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';
import { alive, checkRestart, FORKER, Node, procInfo, SETSID, spawnForkers } from './harness.ts';

/**
 * A graceful stop of the server (SIGTERM) ends within its bound whatever the agents do —
 * here one has a `setsid` grandchild that holds its stdout open, one ignores SIGTERM — and leaves no
 * agent process; the restart resumes each session once, one process group each.
 */
/** Ignores SIGTERM, and so do its children (an ignored signal stays ignored across exec). */
const STUBBORN = ['sh', '-c', "trap '' TERM; sleep 1000 & sleep 1000"];

forEachStore('server SIGTERM', (target) => {
  const nodes: Node[] = [];
  after(async () => {
    for (const n of nodes) await n.cleanup();
  });

  it('stops within its bound, leaves no agent process, and the restart resumes each session once', async () => {
    const node = new Node(target);
    nodes.push(node);
    const s1 = await node.start();
    const ids = await spawnForkers(s1, node, 5, [SETSID, STUBBORN, FORKER, FORKER, FORKER]);
    const before = await node.marked();
    const leader = (await node.records()).find((r) => r.session_id === ids[0])!;
    const escapee = before.find((p) => procInfo(p)?.sid === p && p !== leader.pid);
    assert.ok(escapee, 'the setsid grandchild runs in a session of its own');

    const t0 = Date.now();
    // Bounded: a server still up 20 s after SIGTERM is SIGKILLed, and the check below fails.
    await s1.signal('SIGTERM', 20_000);
    const took = Date.now() - t0;
    console.log(`# graceful server stop took ${took} ms`);
    assert.equal(s1.child.signalCode, null, `the server exited on its own (not SIGKILLed): ${s1.output()}`);
    assert.deepEqual(await node.marked(), [], 'no agent process outlives a graceful stop');
    for (const p of before) assert.ok(!alive(p), `pid ${p} ended`);

    const s2 = await node.start();
    await checkRestart(s2, node, ids, before, 1);
  });
});
