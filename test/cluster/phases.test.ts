import assert from 'node:assert/strict';
import { it } from 'node:test';
import { operator } from '../../src/vocab/principal.ts';
import { forEachStore } from '../helpers/stores.ts';
import { inProcessNodes } from './in-process.ts';

/**
 * Two nodes in one process on one PostgreSQL schema: a `cluster` phase runs on one node at a
 * time (the try-lock), a `node` phase on each; a session another node runs is never started
 * here, whatever asks.
 */
forEachStore(
  'cluster: phases and ownership',
  (target) => {
    const node = inProcessNodes('ph');

    it('a cluster phase runs once across nodes, a node phase on each', async () => {
      const loc = target.location();
      const db = `${loc.url}?schema=${loc.schema}`;
      const a = await node(db, 'ph-a');
      const b = await node(db, 'ph-b');
      assert.equal(a.kernel.node.clustered, true);
      let once = 0;
      let each = 0;
      let overlap = 0;
      let inside = 0;
      for (const w of [a, b]) {
        w.kernel.addReconcilePhase({
          name: 'test:once',
          scope: 'cluster',
          run: async () => {
            inside++;
            if (inside > 1) overlap++;
            once++;
            await new Promise((r) => setTimeout(r, 300));
            inside--;
          },
        });
        w.kernel.addReconcilePhase({ name: 'test:each', scope: 'node', run: async () => void each++ });
      }
      await Promise.all([a.kernel.reconcile(), b.kernel.reconcile()]);
      assert.equal(overlap, 0, 'never on two nodes at once');
      assert.equal(once, 1, 'the cluster phase ran on one node');
      assert.equal(each, 2, 'the node phase ran on both');
      // The lock is released after the phase: the next tick runs it again.
      await a.kernel.reconcile();
      assert.equal(once, 2);
    });

    it('a session another node runs is not started here; its lost-agents phase leaves it alone', async () => {
      const loc = target.location();
      const db = `${loc.url}?schema=${loc.schema}`;
      const a = await node(db, 'own-a');
      const b = await node(db, 'own-b');
      const op = operator();
      const r = (await a.call(op, 'ipc_spawn', { script: { steps: [{ listen: {} }] } })) as {
        session: { id: string };
      };
      const id = r.session.id;
      const row = () =>
        a.store.reader.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal((await row()).owner_node, 'own-a');
      // B is asked to resume it, and reconciles: nothing changes, nothing starts on B.
      await b.call(op, 'resume', { id });
      await b.kernel.reconcile();
      assert.equal(b.kernel.runsHere(id), false);
      assert.equal(a.kernel.runsHere(id), true);
      const now = await row();
      assert.equal(now.owner_node, 'own-a');
      assert.notEqual(now.status, 'suspended', 'B did not suspend an agent it does not run');
      assert.equal(Number(now.token_gen ?? 0), 0, 'no second start bumped its token');
    });
  },
  { backends: ['postgres'] },
);
