/**
 * Seed 001 names the reconciliation phases `dispatch`, `lifecycle-cleanup`,
 * `environment-reconciliation` and `orphan-reparent`; warren names and splits them its own
 * way. `status` (and `warren status`) shows every phase and which of them do each seed phase's
 * work, so a reader of the seed finds its names. Both backends; the CLI over real HTTP.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { cli } from '../cli/helpers.ts';
import { startHttp } from '../helpers/http.ts';
import { call, forEachWarren } from '../helpers/warrens.ts';

const SEED_MAPPING = {
  dispatch: ['orchestration:dispatch'],
  'lifecycle-cleanup': ['unheld'],
  'environment-reconciliation': ['lost-agents', 'runners:reanimate'],
  'orphan-reparent': ['orchestration:orphan-reparent'],
};

forEachWarren('reconcile phases: seed 001’s names beside warren’s', (t) => {
  it('status gives every phase in order with its seed name; warren status prints the mapping', async () => {
    const h = await startHttp(t);
    await h.warren.kernel.reconcile();
    const s = await call(h.warren, 'status');
    const phases: Array<{ name: string; seed: string | null }> = s.reconcile.phases;
    const names = phases.map((p) => p.name);
    for (const must of ['term-deadlines', 'lost-agents', 'unheld', 'cursors', 'orchestration:dispatch'])
      assert.ok(names.includes(must), `${must} in ${names.join(', ')}`);
    const bySeed: Record<string, string[]> = {};
    for (const p of phases) if (p.seed) bySeed[p.seed] = [...(bySeed[p.seed] ?? []), p.name];
    assert.deepEqual(bySeed, SEED_MAPPING);

    const out = await cli(['status'], { env: { WARREN_URL: h.url, WARREN_API_KEY: h.key } });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, new RegExp(`^phases\\s+${names.join(', ')}$`, 'm'));
    assert.match(
      out.stdout,
      /^seed 001 phases\s+dispatch = orchestration:dispatch, lifecycle-cleanup = unheld, environment-reconciliation = lost-agents \+ runners:reanimate, orphan-reparent = orchestration:orphan-reparent$/m,
    );
  });

  it('a failing phase is named with its seed name in the problems', async () => {
    const w = await t.open();
    w.kernel.addReconcilePhase({
      name: 'test:sweep',
      seed: 'lifecycle-cleanup',
      run: async () => {
        throw new Error('disk on fire');
      },
    });
    await w.kernel.reconcile();
    const bad = await call(w, 'status');
    assert.match(
      bad.problems.join('\n'),
      /reconcile phase test:sweep \(seed 001: lifecycle-cleanup\) failed: disk on fire/,
    );
  });
});
