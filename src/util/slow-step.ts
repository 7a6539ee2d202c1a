import type { Log } from './log.ts';

/**
 * Run one step of a stop (or a start) and say so while it is slow: a step still running after
 * `everyMs` is logged, and again each `everyMs` after that, so a stop that hangs says where
 * instead of going quiet.
 */
export async function slowStep<T>(log: Log, what: string, fn: () => Promise<T>, everyMs = 5000): Promise<T> {
  const t0 = Date.now();
  const timer = setInterval(
    () => log.warn({ step: what, ms: Date.now() - t0 }, `${what}: still running`),
    everyMs,
  );
  timer.unref();
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
