import { loadavg } from 'node:os';

/** Small numeric helpers shared by the scale and load benches. */

export const round = (n: number, digits = 2): number => Number(n.toFixed(digits));

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

export interface Summary {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

export function summary(samples: readonly number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 0.5), p99: percentile(s, 0.99), max: s.at(-1) ?? Number.NaN, n: s.length };
}

/** Time `fn` `n` times, one after another, after `warmup` untimed calls; milliseconds. */
export async function timeEach(n: number, fn: (i: number) => Promise<unknown>, warmup = 3): Promise<Summary> {
  for (let i = 0; i < warmup; i++) await fn(-1 - i);
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    ms.push(performance.now() - t);
  }
  return summary(ms);
}

export const mib = (bytes: number): number => round(bytes / 1024 / 1024, 0);

/** The 1-minute load average now: printed beside figures measured on a shared machine. */
export const load1 = (): string => loadavg()[0]!.toFixed(2);

/**
 * Like timeEach, but stops early once `budgetMs` is spent (always at least one sample):
 * for operations whose cost grows with the world, which could otherwise run for minutes.
 */
export async function timeWithin(n: number, budgetMs: number, fn: () => Promise<unknown>): Promise<Summary> {
  const ms: number[] = [];
  const start = performance.now();
  while (ms.length < n && (ms.length === 0 || performance.now() - start < budgetMs)) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  return summary(ms);
}
