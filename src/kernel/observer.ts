import type { LogEvent } from '../store/events.ts';

/**
 * What the kernel tells whoever watches it (metrics): small hooks on hot paths, each a
 * no-op when nobody listens. Observers must be cheap and must not throw.
 */
export interface KernelObserver {
  /** Messages handed to an agent at `at` (ms, the kernel's clock); each event's `ts` is its commit time. */
  delivered?(events: readonly LogEvent[], at: number): void;
  /** One reconcile phase ran; `error` when it failed. */
  reconcilePhase?(phase: string, ms: number, error: unknown): void;
}

/** One reconciliation tick, as `warren status` reports it. */
export interface TickReport {
  /**
   * Its number since the kernel started (1 is the first). A tick numbered two past the last
   * finished one when a condition was seen started after it: a quiescent point for tests.
   */
  n: number;
  /** When it started (ms, the kernel's clock). */
  at: number;
  ms: number;
  errors: Array<{ phase: string; message: string }>;
}
