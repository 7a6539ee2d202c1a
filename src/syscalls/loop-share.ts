/**
 * Fairness at the loop (issue 25, docs/security.md "Untrusted work and the event loop"). Every
 * call starts on the one main thread, and what a call starts (its commit, the deliveries it
 * causes, its answer) runs in the same turn of the loop. Ten clients that each keep a call in
 * flight made turns of 25–30 ms of work, and `/healthz`, like any other caller, waited behind
 * them: p99 73 ms on a quiet machine. So a turn starts calls while it is young; the rest wait
 * for the following turns (setImmediate: after the loop has read its sockets again), taken one
 * per caller in turn, so one caller's flood cannot fill every turn either.
 *
 * "Young" is a time, not only a count: after the first call of a turn, more start while it has
 * spent less than `sliceMs` (its age, which holds what the started calls did meanwhile, since
 * microtasks run between the loop's callbacks; or its calls times what a call has cost lately,
 * for a drain that starts them back to back), and never more than `perTurn`. A bound of two
 * calls alone held 1 ms-apart writes to 100 subscribers each in a queue (publish p99 39 ms
 * against 11 ms unbounded), while a bound of four let a flood of costly calls make 41–87 ms
 * turns; cheap calls now share a turn and costly ones do not.
 */
// The global `performance`, imported for the type of its `nodeTiming` (the loop's idle time).
import { performance } from 'node:perf_hooks';

/** The most calls started in one turn of the loop, however cheap (`limits.callsPerTurn`). */
export const CALLS_PER_TURN = 8;
/** After a turn's first call, more start only while this much of the turn (ms) has passed. */
export const CALL_SLICE_MS = 2;

export class LoopShare {
  /** Calls started in this turn; reset once the turn has run (setImmediate). */
  private started = 0;
  /** When this turn's first call started (`now()`). */
  private turnStart = 0;
  /** The loop's idle time (`idle()`) when this turn's first call started. */
  private turnIdle = 0;
  /** What one call's turn has cost lately (ms): a moving average over the turns watched; none yet, undefined. */
  private callCost: number | undefined;
  /** This turn's end is awaited (`endTurn` is scheduled). */
  private watching = false;
  /** Waiting calls by caller, in arrival order; the map's order is the round robin's. */
  private readonly waiting = new Map<string, Array<() => void>>();
  private draining = false;

  constructor(
    private readonly perTurn: number,
    private readonly sliceMs: number = CALL_SLICE_MS,
    private readonly now: () => number = () => performance.now(),
    /** How long the loop has waited for I/O in all (ms): it grows only between two turns. */
    private readonly idle: () => number = () => performance.nodeTiming.idleTime,
  ) {
    if (!Number.isInteger(perTurn) || perTurn < 1) throw new Error('callsPerTurn: a whole number ≥ 1');
    if (!(sliceMs >= 0)) throw new Error('callSliceMs: a number ≥ 0');
  }

  /** Calls waiting for a later turn (`Warren.callsWaiting`). */
  get queued(): number {
    let n = 0;
    for (const q of this.waiting.values()) n += q.length;
    return n;
  }

  /**
   * `start()` now if this turn has room and nobody waits before it; else in a later turn, in
   * `caller`'s place of the round robin. Either way the caller gets what `start` returns.
   */
  admit<T>(caller: string, start: () => Promise<T>): Promise<T> {
    if (this.waiting.size === 0 && this.take()) return start();
    return new Promise<T>((resolve, reject) => {
      const run = () => {
        // A throw while starting rejects like a failed call.
        try {
          start().then(resolve, reject);
        } catch (error) {
          reject(error);
        }
      };
      const queue = this.waiting.get(caller);
      if (queue) queue.push(run);
      else this.waiting.set(caller, [run]);
      this.scheduleDrain();
    });
  }

  /**
   * Count one call against this turn, if it has room: the first always, more while it is young.
   * A turn's end is only watched for (a `setImmediate`) once a second call comes within a slice
   * of its first: one call at a time, the usual traffic, then costs no extra turn of the loop
   * each (an immediate makes the loop poll once more before it sleeps: 2 µs of a 40 µs round
   * trip). Unwatched, a call after the loop has waited for I/O (its idle time grew) or a slice
   * or more after the first starts a turn of its own; one sooner, with no wait between, is
   * counted with it, as if in the same turn: at worst a bound a slice early. Counting a call
   * that came a timer later with the turn before it made that turn's age and cost include the
   * wait: at 1 000 paced writes/s the cost read 0.55–0.6 ms a call, about twice what one cost,
   * and a late timer's few calls were split across turns. The cost counts for every call of the
   * turn, answered ones too, though their own work is in its age: what they set off (deliveries,
   * the agents they wake) runs later in the turn. Counted for unanswered calls only, ten agents'
   * 1,000-step scripts held the loop with 17.8–24.7 ms of the server's own work in 5 of 20 runs
   * (the stall bench), against at most 10.4–15.7 ms in all 20.
   */
  private take(): boolean {
    const now = this.now();
    const idle = this.idle();
    if (
      this.started === 0 ||
      (!this.watching && (idle > this.turnIdle || now - this.turnStart >= this.sliceMs))
    ) {
      this.started = 1;
      this.turnStart = now;
      this.turnIdle = idle;
      return true;
    }
    if (!this.watching) {
      this.watching = true;
      setImmediate(this.endTurn);
    }
    if (this.started >= this.perTurn) return false;
    if (Math.max(now - this.turnStart, this.started * (this.callCost ?? 0)) >= this.sliceMs) return false;
    this.started++;
    return true;
  }

  /**
   * The turn has run (its calls' work with it; a pending immediate keeps the loop from waiting
   * for I/O meanwhile): fold what a call cost in it into the average (the first measure is
   * taken as it is).
   */
  private readonly endTurn = (): void => {
    const cost = (this.now() - this.turnStart) / this.started;
    this.callCost = this.callCost === undefined ? cost : this.callCost + (cost - this.callCost) / 4;
    this.started = 0;
    this.watching = false;
  };

  private scheduleDrain(): void {
    if (this.draining) return;
    this.draining = true;
    setImmediate(() => this.drain());
  }

  /** Start what this turn has room for, one call per caller in turn; the rest wait again. */
  private drain(): void {
    this.draining = false;
    while (this.waiting.size > 0 && this.take()) {
      const [caller, queue] = this.waiting.entries().next().value as [string, Array<() => void>];
      const run = queue.shift() as () => void;
      // To the back of the round robin (or out of it, once it has nothing waiting).
      this.waiting.delete(caller);
      if (queue.length > 0) this.waiting.set(caller, queue);
      run();
    }
    if (this.waiting.size > 0) this.scheduleDrain();
  }
}
