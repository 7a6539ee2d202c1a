/**
 * Paired costs for bench/compare.ts. A run measures each bench N times a side, the two sides
 * back to back in each round (alternating which goes first), so round r of one side and round r
 * of the other saw the same moment of the machine. The cost of round r is now / base (base / now
 * where more is better); the row's cost is the median of those, with a distribution-free
 * interval for it, so a row is called slower only when the rounds agree that it is.
 *
 * Why: on a shared 2-vCPU VM one round of a p99 row moves by ±50 % or more (a collector pause,
 * a neighbour), so the median of each side alone can land over 5 % by chance, and a different
 * row does so in each run. The interval says how far a row's rounds spread.
 */
import { percentile } from './stats.ts';

/** The median of `n` paired costs and an interval for it. */
export interface PairedCost {
  median: number;
  low: number;
  high: number;
  /** Pairs that both ran (a round that failed on either side is left out). */
  n: number;
  /** The chance that the interval holds the true median (order statistics; 0 with no pairs). */
  coverage: number;
}

/** The wanted coverage of the interval; fewer than 5 pairs cannot reach it (min–max is taken). */
export const COVERAGE = 0.9;

/** P(X ≤ k) for X ~ Binomial(n, 1/2). */
function binomialHalfCdf(n: number, k: number): number {
  let term = 0.5 ** n; // C(n, 0) / 2^n
  let sum = 0;
  for (let i = 0; i <= k; i++) {
    sum += term;
    term = (term * (n - i)) / (i + 1);
  }
  return sum;
}

/**
 * The interval [x(k), x(n+1-k)] of the sorted costs with the narrowest k whose coverage,
 * 1 − 2·P(Bin(n, ½) ≤ k − 1), is at least COVERAGE; with too few pairs for that, min–max.
 */
export function medianInterval(sorted: readonly number[]): { low: number; high: number; coverage: number } {
  const n = sorted.length;
  if (n === 0) return { low: Number.NaN, high: Number.NaN, coverage: 0 };
  let k = 1;
  while (k + 1 <= Math.floor((n + 1) / 2) && 1 - 2 * binomialHalfCdf(n, k) >= COVERAGE) k++;
  return { low: sorted[k - 1]!, high: sorted[n - k]!, coverage: 1 - 2 * binomialHalfCdf(n, k - 1) };
}

/** Round by round `cost(base[r], now[r])`, then their median and its interval. */
export function pairedCost(
  base: readonly number[],
  now: readonly number[],
  cost: (base: number, now: number) => number,
): PairedCost {
  const costs: number[] = [];
  for (let r = 0; r < Math.min(base.length, now.length); r++) {
    const c = cost(base[r]!, now[r]!);
    if (Number.isFinite(c)) costs.push(c);
  }
  costs.sort((a, b) => a - b);
  // The same median compare.ts takes of each side's rounds (of an even count, the upper middle).
  return { median: percentile(costs, 0.5), n: costs.length, ...medianInterval(costs) };
}

/**
 * `slower`: the median cost is over `limit` and the interval lies above 1 (the rounds agree
 * the row got slower); `unsure`: the median is over `limit` but some rounds were no slower,
 * so this many rounds cannot tell it from the machine's noise; `ok` otherwise.
 */
export function verdict(c: PairedCost, limit = 1.05): 'slower' | 'unsure' | 'ok' {
  if (!(c.median > limit)) return 'ok';
  return c.low > 1 ? 'slower' : 'unsure';
}
