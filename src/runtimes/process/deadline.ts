import type { Socket } from 'node:net';
import type { Clock } from '../../util/clock.ts';

/**
 * The deadline the lifeline watchers of one server's (or runner's) agents hold (lifeline.ts):
 * the time by which the next beat must come, or each watcher ends its agent's group. Unset
 * (a node alone on its database) the watchers end their groups at EOF only, as always.
 *
 * A node in a cluster sets it at each successful lease renewal (cluster.ts), a runner at each
 * beat of its node; every open lifeline then gets one line: the seconds left, from now.
 */
export class LifelineDeadline {
  /** When the watchers end their groups (this clock), or null: no deadline. */
  private at: number | null = null;
  private readonly lines = new Set<Socket>();

  constructor(private readonly clock: Clock) {}

  /** Move the deadline to `ms` from now and tell every watcher. */
  extend(ms: number): void {
    this.at = this.clock.now() + ms;
    const line = `${this.secondsLeft()}\n`;
    for (const l of this.lines) l.write(line);
  }

  /** Milliseconds left before the deadline (0 when passed), or null without one. */
  msLeft(): number | null {
    return this.at === null ? null : Math.max(0, this.at - this.clock.now());
  }

  /** What a watcher starting now is given: the seconds left (0 when passed), or null without a deadline. */
  secondsLeft(): string | null {
    const ms = this.msLeft();
    return ms === null ? null : (ms / 1000).toFixed(3);
  }

  /** Beat this lifeline from now on, until it closes. */
  hold(lifeline: Socket): void {
    if (this.at === null) return; // without a deadline a beat is never needed
    this.lines.add(lifeline);
    lifeline.once('close', () => this.lines.delete(lifeline));
  }
}
