import assert from 'node:assert/strict';
import type { WarrenTarget } from './warrens.ts';
import { call, rowCounts } from './warrens.ts';

/**
 * Spawn and stop `cycles` sessions (50 at a time, a reconcile tick every 1,000), then let
 * retention run: the tables stay bounded between ticks and hold only init at the end.
 */
export async function assertRowsBoundedAfterCycles(t: WarrenTarget, cycles: number): Promise<void> {
  const w = await t.open({
    kernel: { sessionRetentionDays: 0, limits: { maxDepth: 10, maxChildren: 10, maxSessionsPerZone: 100 } },
  });
  const batch = 50;
  let peak = 0;
  for (let i = 0; i < cycles; i += batch) {
    const spawned = await Promise.all(
      Array.from({ length: batch }, () => call(w, 'ipc_spawn', { script: { steps: [] } })),
    );
    await Promise.all(
      spawned.map((s: { session: { id: string } }) => call(w, 'kill', { id: s.session.id }).catch(() => {})),
    );
    if ((i / batch) % 20 === 19) {
      await w.kernel.reconcile();
      peak = Math.max(peak, (await rowCounts(w)).sessions);
    }
  }
  // A few ticks retire what is left (each takes a bounded batch).
  for (let i = 0; i < 5; i++) await w.kernel.reconcile();
  const end = await rowCounts(w);
  assert.ok(peak <= 1_100, `sessions stayed bounded between ticks (peak ${peak})`);
  assert.equal(end.sessions, 1, 'only init is left');
  assert.equal(end.streams, 0);
  assert.equal(end.fds, 0);
}
