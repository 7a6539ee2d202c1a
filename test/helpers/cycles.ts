import assert from 'node:assert/strict';
import type { WarrenTarget } from './warrens.ts';
import { call, rowCounts } from './warrens.ts';

/**
 * Spawn and stop `cycles` sessions (50 at a time, a reconcile tick every fifth of them, at most
 * every 1,000), then let retention run: after each tick at most what came since the last one
 * is left (nothing piles up across ticks), and only init at the end.
 */
export async function assertRowsBoundedAfterCycles(t: WarrenTarget, cycles: number): Promise<void> {
  const w = await t.open({
    kernel: { sessionRetentionDays: 0, limits: { maxDepth: 10, maxChildren: 10, maxSessionsPerZone: 100 } },
  });
  const batch = 50;
  const tickEvery = Math.max(batch, Math.min(1_000, Math.floor(cycles / 5 / batch) * batch));
  let peak = 0;
  let ticks = 0;
  for (let i = batch; i <= cycles; i += batch) {
    const spawned = await Promise.all(
      Array.from({ length: batch }, () => call(w, 'ipc_spawn', { script: { steps: [] } })),
    );
    await Promise.all(
      spawned.map((s: { session: { id: string } }) => call(w, 'kill', { id: s.session.id }).catch(() => {})),
    );
    if (i % tickEvery === 0) {
      await w.kernel.reconcile();
      ticks++;
      peak = Math.max(peak, (await rowCounts(w)).sessions);
    }
  }
  // A few ticks retire what is left (each takes a bounded batch).
  for (let i = 0; i < 5; i++) await w.kernel.reconcile();
  const end = await rowCounts(w);
  assert.ok(ticks >= 5, `ticked between cycles (${ticks})`);
  assert.ok(
    peak <= tickEvery + 1,
    `sessions stayed bounded between ticks (peak ${peak}, a tick every ${tickEvery})`,
  );
  assert.equal(end.sessions, 1, 'only init is left');
  assert.equal(end.streams, 0);
  assert.equal(end.fds, 0);
}
