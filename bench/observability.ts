/**
 * Observability benchmarks. Run this file on its own (`npx tsx bench/observability.ts`).
 *
 * - metricsOverhead: an operator's `ipc_write` to a room with one async listener, round trip
 *   through the syscall table, with metrics on (the writer's commit and batch observers, the
 *   delivery hook, a scrape now and then) vs off (prom-client never loaded). Two warrens,
 *   measured in alternating blocks so drift on a shared machine hits both alike.
 */
import { roomWarren, writeBlock } from './lib/room.ts';
import { round, type Summary, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

export async function metricsOverhead(
  opts: { blocks?: number; perBlock?: number } = {},
): Promise<BenchRow[]> {
  const blocks = opts.blocks ?? 20;
  const perBlock = opts.perBlock ?? 80;
  const samples = { off: [] as number[], on: [] as number[] };
  // The ratio is taken per pair of neighbouring blocks, then the median of those: a busy
  // shared machine drifts over seconds, and a pair sees the same drift.
  const ratios: number[] = [];
  let scrapeMs = 0;
  // Two rounds, opening the warrens in both orders: measured with metrics off in both, the
  // warren opened second ran 1-4 % slower, which would otherwise count as metrics' cost.
  for (const onFirst of [false, true]) {
    using offDir = tempDir();
    using onDir = tempDir();
    const first = await roomWarren(onFirst ? onDir.dir : offDir.dir, { metrics: onFirst });
    const second = await roomWarren(onFirst ? offDir.dir : onDir.dir, { metrics: !onFirst });
    const [on, off] = onFirst ? [first, second] : [second, first];
    try {
      if (!on.warren.metrics || off.warren.metrics)
        throw new Error('metrics should be on in one warren only');
      const run = writeBlock;
      await run(off, [], 100);
      await run(on, [], 100);
      for (let b = 0; b < blocks; b++) {
        const order = b % 2 === 0 ? ([off, on] as const) : ([on, off] as const);
        const block = { off: [] as number[], on: [] as number[] };
        for (const w of order) await run(w, w === off ? block.off : block.on, perBlock);
        ratios.push(summary(block.on).p50 / summary(block.off).p50);
        samples.off.push(...block.off);
        samples.on.push(...block.on);
        // A scrape between blocks, as Prometheus would every few seconds (not timed in the writes).
        const t = performance.now();
        await on.warren.metrics.scrape();
        scrapeMs = Math.max(scrapeMs, performance.now() - t);
      }
    } finally {
      await second.warren.close();
      await first.warren.close();
    }
  }
  const o: Summary = summary(samples.off);
  const m: Summary = summary(samples.on);
  return [
    {
      name: 'ipc_write round trip, metrics on vs off (median of per-block p50 ratios)',
      value: round(summary(ratios).p50, 3),
      unit: '×',
      max: 1.03,
      note: `overall p50 ${round(m.p50, 3)} ms on vs ${round(o.p50, 3)} ms off; p99 ${round(m.p99, 2)} vs ${round(o.p99, 2)} ms; ${m.n} writes each in ${ratios.length} alternating blocks over two warren pairs, one async listener; slowest scrape ${round(scrapeMs, 2)} ms`,
    },
  ];
}

export const observabilityBenches = { metricsOverhead };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  const rows: BenchRow[] = [];
  for (const bench of Object.values(observabilityBenches)) rows.push(...(await bench()));
  console.log(formatRows(rows));
}
