import type { LogEvent } from '../../store/events.ts';
import type { Clock, TimerHandle } from '../../util/clock.ts';

/**
 * Waits on committed events, fed by the plugin instance's `onCommit` (the host subscribes
 * it): the commit notifications, not polling. A batch with no waiter costs a set's size check.
 */
export class CommitWaits {
  private readonly waiters = new Set<(events: readonly LogEvent[]) => void>();
  /** How to end each armed wait (as timed out): the plugin's stop ends them all. */
  private readonly pending = new Set<() => void>();
  /** Stopped: every wait armed from now on ends at once (a loop that re-arms then returns). */
  closed = false;

  constructor(private readonly clock: Clock) {}

  /** Each committed batch, in commit order. */
  publish(events: readonly LogEvent[]): void {
    if (this.waiters.size === 0) return;
    for (const w of [...this.waiters]) w(events);
  }

  /**
   * Resolve when a committed event matches `pred`, after `ms`, or on abort. Returns whether an
   * event matched. Arm before checking state, then check, then await `fired`.
   */
  arm(
    pred: (e: LogEvent) => boolean,
    ms: number,
    signal?: AbortSignal,
  ): { fired: Promise<boolean>; cancel(): void } {
    let done: (v: boolean) => void = () => {};
    const fired = new Promise<boolean>((r) => (done = r));
    let timer: TimerHandle | undefined;
    const waiter = (events: readonly LogEvent[]) => {
      if (events.some(pred)) finish(true);
    };
    this.waiters.add(waiter);
    const onAbort = () => finish(false);
    const end = () => finish(false);
    this.pending.add(end);
    const finish = (v: boolean) => {
      this.waiters.delete(waiter);
      this.pending.delete(end);
      if (timer) this.clock.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      done(v);
    };
    timer = this.clock.setTimeout(() => finish(false), ms, { keepAlive: true });
    signal?.addEventListener('abort', onAbort);
    if (signal?.aborted || this.closed) finish(false);
    return { fired, cancel: () => finish(false) };
  }

  /**
   * End every armed wait now, as timed out: a stopping server answers its long polls instead
   * of keeping their timers (which keep the process alive) for up to their whole wait.
   */
  close(): void {
    this.closed = true;
    for (const end of [...this.pending]) end();
  }

  /** The next matching commit (or the timeout, or the abort): `arm` with nothing to check first. */
  next(pred: (e: LogEvent) => boolean, ms: number, signal?: AbortSignal): Promise<boolean> {
    return this.arm(pred, ms, signal).fired;
  }
}
