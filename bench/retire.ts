/**
 * retireCycles: 10,000 spawn/stop cycles (50 at a time, a reconcile tick every 1,000: at most that many left after each), then
 * retention: the row counts stay bounded between ticks and only init is left at the end (the
 * check of test/helpers/cycles.ts, which the suite runs with 500 cycles on both backends in
 * test/kernel/retire.test.ts). The property at scale, and its cost: row value = ms per cycle
 * over 10,000; baseline, same run: ms per cycle over 500 (the suite's count) on a fresh
 * warren; ratio = how much dearer a cycle is at 20× the count (goal: at most 1.5, i.e. no
 * growth with the number of sessions that ever ran). SQLite, in process.
 *
 * `npm run bench -- retireCycles`; RETIRE_CYCLES=… for another count.
 */
import { assertRowsBoundedAfterCycles } from '../test/helpers/cycles.ts';
import { round } from './lib/stats.ts';
import { benchTarget } from './lib/target.ts';
import type { BenchRow } from './store.ts';

const CYCLES = Number(process.env.RETIRE_CYCLES ?? 10_000);
const SUITE_CYCLES = 500;

async function perCycle(cycles: number): Promise<number> {
  await using t = benchTarget();
  const t0 = performance.now();
  await assertRowsBoundedAfterCycles(t, cycles);
  return (performance.now() - t0) / cycles;
}

async function retireCycles(): Promise<BenchRow[]> {
  const base = await perCycle(SUITE_CYCLES);
  const value = await perCycle(CYCLES);
  return [
    {
      name: `retire: ${CYCLES.toLocaleString('en-US')} spawn/stop cycles, per cycle`,
      value: round(value, 2),
      unit: 'ms',
      baseline: round(base, 2),
      ratio: round(value / base, 2),
      // Lower is better here: the goal is a ceiling on the ratio, kept in `max` on the value.
      max: round(base * 1.5, 2),
      note: `rows bounded between ticks, only init left after retention; baseline ${SUITE_CYCLES} cycles; max = 1.5 × baseline`,
    },
  ];
}

export const retireBenches = { retireCycles };
