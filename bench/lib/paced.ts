import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Open-loop pacing: call `fn(i)` at `rate` per second for `ms`, never waiting for a call to
 * finish before the next is due, so a slow kernel does not lower the offered load. Timers
 * tick at ~1 ms; a late tick issues what fell due in one go. Resolves once every call is
 * issued (not finished) with the calls' promises and the time issuing took.
 */
export async function pacedIssue(
  rate: number,
  ms: number,
  fn: (i: number) => Promise<unknown>,
): Promise<{ calls: Array<Promise<unknown>>; issuedMs: number }> {
  const n = Math.round((rate * ms) / 1000);
  const interval = 1000 / rate;
  const calls: Array<Promise<unknown>> = [];
  const start = performance.now();
  let i = 0;
  while (i < n) {
    const wait = start + i * interval - performance.now();
    if (wait > 0) await sleep(wait);
    const now = performance.now();
    while (i < n && start + i * interval <= now) calls.push(fn(i++));
  }
  return { calls, issuedMs: performance.now() - start };
}

/** Settles when every promise has, or after `ms`; true when all settled in time. */
export async function settledWithin(promises: Array<Promise<unknown>>, ms: number): Promise<boolean> {
  const timeout = sleep(ms, 'timeout' as const);
  const all = Promise.allSettled(promises).then(() => 'done' as const);
  return (await Promise.race([all, timeout])) === 'done';
}
