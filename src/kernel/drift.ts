import type { LogEvent } from '../store/events.ts';

/** A full sweep this many ticks apart (an hour at the default 10 s): the backstop's backstop. */
export const FULL_SWEEP_EVERY = 360;

/**
 * What the reconciler's per-session phases need to look at, followed from committed events,
 * so a tick where nothing changed costs nothing per live session:
 * - `agents`: sessions that became running or idle (their agent may be missing here);
 * - `holders`: streams that lost an fd (their session may be held by nobody now).
 * The first tick, and every `FULL_SWEEP_EVERY`-th, still looks at everything: rows changed
 * by another node or before this kernel started, and an agent whose exit failed to record,
 * are seen there.
 */
export class DriftWatch {
  readonly agents = new Set<string>();
  readonly holders = new Set<string>();
  private ticks = 0;

  follow(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.type === 'session.status' && e.session_id) {
        const to = e.payload.to;
        if (to === 'running' || to === 'idle') this.agents.add(e.session_id);
      } else if ((e.type === 'fd.closed' || e.type === 'fd.moved') && e.stream_id) {
        this.holders.add(e.stream_id);
      }
    }
  }

  /** Called once per tick, first: true when this tick must look at every live session. */
  fullSweep(): boolean {
    const full = this.ticks % FULL_SWEEP_EVERY === 0;
    this.ticks += 1;
    return full;
  }

  /** Take a set's contents (what arrives meanwhile waits for the next tick). */
  static take(set: Set<string>): string[] {
    const out = [...set];
    set.clear();
    return out;
  }
}
