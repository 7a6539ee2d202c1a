/**
 * Plugin benchmarks. Run this file on its own (`npx tsx bench/plugins.ts`) to print its rows.
 *
 * - pluginLayerCost: an operator's `ipc_write` to a room with one async listener, round
 *   trip through the syscall table, with every plugin loaded vs `core` only (two warrens,
 *   measured in alternating blocks so drift on a shared machine hits both alike).
 */
import { roomWarren, writeBlock } from './lib/room.ts';
import { round, type Summary, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

export async function pluginLayerCost(
  opts: { blocks?: number; perBlock?: number } = {},
): Promise<BenchRow[]> {
  const blocks = opts.blocks ?? 6;
  const perBlock = opts.perBlock ?? 250;
  using coreDir = tempDir();
  using allDir = tempDir();
  const core = await roomWarren(coreDir.dir, { plugins: { seed: [] } });
  const all = await roomWarren(allDir.dir);
  try {
    const loaded = all.warren.plugins.loaded.map((p) => p.name);
    if (core.warren.plugins.loaded.length !== 1) throw new Error('the core-only warren loaded plugins');
    const samples = { core: [] as number[], all: [] as number[] };
    const run = writeBlock;
    // Warm-up, untimed.
    await run(core, [], 100);
    await run(all, [], 100);
    for (let b = 0; b < blocks; b++) {
      // Alternate which goes first, so neither always follows the other's tail.
      const order = b % 2 === 0 ? ([core, all] as const) : ([all, core] as const);
      for (const w of order) await run(w, w === core ? samples.core : samples.all, perBlock);
    }
    const c: Summary = summary(samples.core);
    const a: Summary = summary(samples.all);
    return [
      {
        name: 'ipc_write round trip, all plugins vs core only (p50 ratio)',
        value: round(a.p50 / c.p50, 3),
        unit: '×',
        max: 1.05,
        note: `p50 ${round(a.p50, 3)} ms with ${loaded.join('+')} vs ${round(c.p50, 3)} ms core only; p99 ${round(a.p99, 2)} vs ${round(c.p99, 2)} ms; ${a.n} writes each in ${blocks} alternating blocks, one async listener`,
      },
    ];
  } finally {
    await all.warren.close();
    await core.warren.close();
  }
}

export const pluginBenches = { pluginLayerCost };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  const rows: BenchRow[] = [];
  for (const bench of Object.values(pluginBenches)) rows.push(...(await bench()));
  console.log(formatRows(rows));
}
