import type { Clock, TimerHandle } from '../../util/clock.ts';
import type { RunnerConnection } from './connection.ts';

/**
 * The heartbeat on every runner connection, both ways (docs/runners.md, "Heartbeat"). Every
 * `everyMs` the server sends each runner a `beat`: how long its agents may run without another
 * (the window, 5 beats, or this node's lease deadline when sooner) and within what the runner
 * should hear the next. The runner answers each beat. Its agents' lifeline watchers hold that
 * deadline (lifeline.ts), so a runner that is paused or cut off has its agents ended by then;
 * the server takes a runner it has not heard from for the window plus one beat for gone, after
 * that deadline, and suspends or moves its sessions.
 */
export class RunnerHeartbeat {
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly everyMs: number,
    /** The runners to beat now. */
    private readonly connections: () => RunnerConnection[],
    /** Milliseconds left on this node's lease deadline (null alone: no lease). */
    private readonly leaseLeftMs: () => number | null,
    /** A runner not heard from in time: end its connection (its sessions are suspended). */
    private readonly silent: (conn: RunnerConnection, ms: number) => void,
  ) {}

  get windowMs(): number {
    return 5 * this.everyMs;
  }

  /** Silent this long, a runner is gone: its agents' deadline has passed by one beat. */
  get silentAfterMs(): number {
    return this.windowMs + this.everyMs;
  }

  start(): void {
    if (this.stopped || this.timer) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.tick();
      this.start();
    }, this.everyMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
  }

  /** Beat one runner now (at its welcome, so its first agents already have a deadline). */
  beat(conn: RunnerConnection): void {
    const lease = this.leaseLeftMs();
    const leftMs = lease === null ? this.windowMs : Math.min(this.windowMs, lease);
    conn.send({ t: 'beat', leftMs, withinMs: this.windowMs });
  }

  private tick(): void {
    const now = this.clock.now();
    for (const conn of this.connections()) {
      if (!conn.open || !conn.beats) continue;
      if (now - conn.heardAt > this.silentAfterMs) this.silent(conn, now - conn.heardAt);
      else this.beat(conn);
    }
  }
}
