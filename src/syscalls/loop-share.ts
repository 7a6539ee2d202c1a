/**
 * Fairness at the loop (issue 25, docs/security.md "Untrusted work and the event loop"). Every
 * call starts on the one main thread, and what a call starts (its commit, the deliveries it
 * causes, its answer) runs in the same turn of the loop. Ten clients that each keep a call in
 * flight made turns of 25–30 ms of work, and `/healthz`, like any other caller, waited behind
 * them: p99 73 ms on a quiet machine. So at most `perTurn` calls start in one turn; the rest
 * wait for the following turns (setImmediate: after the loop has read its sockets again),
 * taken one per caller in turn, so one caller's flood cannot fill every turn either.
 */
/**
 * Calls started in one turn of the loop: enough that a burst costs no extra turn in the common
 * case, few enough that a turn stays short under a flood (docs/performance.md, the stall rows).
 */
export const CALLS_PER_TURN = 2;

export class LoopShare {
  /** Calls started in this turn; reset once the turn has run (setImmediate). */
  private started = 0;
  /** Waiting calls by caller, in arrival order; the map's order is the round robin's. */
  private readonly waiting = new Map<string, Array<() => void>>();
  private draining = false;

  constructor(private readonly perTurn: number) {
    if (!Number.isInteger(perTurn) || perTurn < 1) throw new Error('callsPerTurn: a whole number ≥ 1');
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

  /** Count one call against this turn, if it has room. */
  private take(): boolean {
    if (this.started >= this.perTurn) return false;
    if (this.started++ === 0) setImmediate(() => this.endTurn());
    return true;
  }

  private endTurn(): void {
    this.started = 0;
  }

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
