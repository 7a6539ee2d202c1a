import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Node, type Session } from '../crash/harness.ts';
import { forEachStore } from '../helpers/stores.ts';

/**
 * docs/deep-trees.md on a running server: with the agent and worker tiers opened to
 * ipc_spawn by configuration, script agents build orchestrator → leads → sub-leads →
 * workers (depth 4) through ipc_spawn, the replies flow up to the orchestrator, and a
 * SIGKILL of the orchestrator takes the whole tree down.
 */

const SCRIPT = readFileSync(
  fileURLToPath(new URL('../../docs/examples/deep-tree.yaml', import.meta.url)),
  'utf8',
);

/** The configuration of docs/deep-trees.md: spawning allowed down to depth 4, no deeper. */
export const DEEP_TREE_CONFIG = {
  kernel: { limits: { maxDepth: 4, maxChildren: 10, maxSessionsPerZone: 50 } },
  gating: {
    tiers: {
      agent: [
        'ipc_spawn',
        'ipc_write',
        'ipc_read',
        'ipc_close',
        'ipc_list_fds',
        'ipc_list_streams',
        'ipc_create_stream',
        'ipc_attach',
        'ipc_share_stream',
        'streams_transcript',
      ],
      worker: ['ipc_spawn', 'ipc_write', 'ipc_read', 'ipc_list_fds'],
    },
  },
};

forEachStore('deep tree', (target) => {
  const nodes: Node[] = [];
  after(async () => {
    for (const n of nodes) await n.cleanup();
  });

  it('builds depth 4 through ipc_spawn, replies flow up, killing the orchestrator takes it all', async () => {
    const node = new Node(target, DEEP_TREE_CONFIG);
    nodes.push(node);
    const s = await node.start();
    const orch = (
      await s.api<{ session: { id: string } }>('POST', '/v1/sessions', {
        title: 'orchestrator',
        prompt: 'the release',
        script: SCRIPT,
      })
    ).session.id;

    const done = await s.until(orch, (x) => x.lastMessage?.startsWith('orchestrator: lead') ?? false, 60_000);
    assert.equal(
      done.lastMessage,
      'orchestrator: lead frontend: frontend/ui: [done frontend/ui#1] [done frontend/ui#2]' +
        ' | lead backend: backend/ui: [done backend/ui#1] [done backend/ui#2]',
    );
    const all = (await s.api<{ sessions: Session[] }>('GET', '/v1/sessions')).sessions;
    const tree = all.filter((x) => x.depth > 0);
    assert.equal(tree.length, 9, 'orchestrator, 2 leads, 2 sub-leads, 4 workers');
    const byDepth = (d: number) => tree.filter((x) => x.depth === d);
    assert.deepEqual(
      [1, 2, 3, 4].map((d) => byDepth(d).length),
      [1, 2, 2, 4],
    );
    const ids = new Set(tree.map((x) => x.id));
    for (const x of tree) {
      if (x.depth === 1) assert.equal(x.id, orch);
      else assert.ok(ids.has(x.parentId!), `${x.id} (depth ${x.depth}) is a child in the tree`);
      assert.notEqual(x.status, 'stopped', `${x.id} is on call`);
    }

    const t0 = Date.now();
    await s.api('POST', `/v1/sessions/${orch}/kill`, {});
    for (const x of tree) await s.until(x.id, (y) => y.status === 'stopped', 20_000);
    console.log(`# the tree of 9 was down ${Date.now() - t0} ms after the orchestrator's SIGKILL`);
    assert.equal((await s.session(orch)).endReason, 'killed');
    for (const x of tree)
      assert.ok(['killed', 'reaped'].includes((await s.session(x.id)).endReason ?? ''), `${x.id} ended`);
  });
});
