import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';
import { Node, sleep, spawnForkers, within } from './harness.ts';

/**
 * A graceful stop that lands while the restarted server is still bringing its agents back
 * (resumes in flight) is as bounded as any other, and leaves no agent process behind.
 */
forEachStore('SIGTERM during resume', (target) => {
  const nodes: Node[] = [];
  after(async () => {
    for (const n of nodes) await n.cleanup();
  });

  it('stops within its bound and leaves nothing, even with agents still starting', async () => {
    const node = new Node(target);
    nodes.push(node);
    const s1 = await node.start();
    await spawnForkers(s1, node, 5);
    await s1.signal('SIGKILL');
    await within(20_000, 'first run gone', async () => (await node.marked()).length === 0);

    const s2 = await node.start();
    // `serve` installs its signal handlers just after it prints that it listens.
    await sleep(Number(process.env.DELAY ?? 30));
    const t0 = Date.now();
    // Bounded: a server still up 20 s after SIGTERM is SIGKILLed, and the check below fails.
    await s2.signal('SIGTERM', 20_000);
    const took = Date.now() - t0;
    console.log(`# stop during resume took ${took} ms`);
    assert.equal(s2.child.signalCode, null, `the server exited on its own: ${s2.output()}`);
    await within(
      20_000,
      'no agent process outlives the stop',
      async () => (await node.marked()).length === 0,
    );
  });
});
