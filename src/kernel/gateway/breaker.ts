/**
 * A circuit breaker per provider key (docs/gateway.md): after `breakerFailures` calls in a
 * row that failed upstream (a 5xx or 529 answer once the limiter's retries are spent, or no
 * answer at all) it opens, and for `breakerCoolMs` every call on the key is refused at once
 * instead of being sent to fail. Then one call goes through as a probe (half-open): if it
 * succeeds the breaker closes, if it fails it opens again for another cool-down.
 */

export interface BreakerConfig {
  /** Failed calls in a row that open it (0: no breaker). */
  breakerFailures: number;
  /** How long it stays open before a probe (ms). */
  breakerCoolMs: number;
}

/** A call refused because its key's breaker is open. */
export class BreakerOpen extends Error {
  constructor(
    /** How long until a probe may go. */
    readonly waitMs: number,
    failures: number,
    cause: string,
    now: number,
  ) {
    super(
      waitMs > 0
        ? `the circuit breaker of this provider key is open: ${failures} calls in a row failed upstream (last: ${cause}); it lets a call through again at ${new Date(now + waitMs).toISOString()} (in ${Math.ceil(waitMs / 1000)} s). The request was not sent.`
        : `the circuit breaker of this provider key is half-open: a probe call is under way after ${failures} calls in a row failed upstream (last: ${cause}). The request was not sent.`,
    );
  }
}

/** The breaker opened or closed: for the log. */
export interface BreakerChange {
  state: 'open' | 'closed';
  /** Failed calls in a row. */
  failures: number;
  /** The last failure (`502`, `ECONNREFUSED`, …). */
  cause: string;
  /** While open: when a probe may go (ms since the epoch). */
  until?: number;
}

/** How long a call waits to be told again while another call probes (s in retry-after). */
const PROBING_WAIT_MS = 1000;

export class Breaker {
  private failures = 0;
  private cause = '';
  /** 0: closed; else open until then (and half-open after). */
  private openUntil = 0;
  private probing = false;
  readonly stats = { opened: 0, refused: 0 };

  get open(): boolean {
    return this.openUntil !== 0;
  }

  /**
   * Before a call: throws BreakerOpen while open, and while another call probes; resolves to
   * whether this call is the probe.
   */
  admit(now: number, cfg: BreakerConfig): boolean {
    if (this.openUntil === 0 || cfg.breakerFailures <= 0) return false;
    if (now < this.openUntil || this.probing) {
      this.stats.refused++;
      const wait = this.probing ? PROBING_WAIT_MS : this.openUntil - now;
      throw new BreakerOpen(this.probing ? 0 : wait, this.failures, this.cause, now);
    }
    this.probing = true;
    return true;
  }

  /** A call's outcome upstream; the change to log, if it opened or closed the breaker. */
  outcome(ok: boolean, cause: string, probe: boolean, now: number, cfg: BreakerConfig): BreakerChange | null {
    if (probe) this.probing = false;
    if (ok) {
      const was = { failures: this.failures, cause: this.cause };
      this.failures = 0;
      if (!probe || this.openUntil === 0) return null;
      this.openUntil = 0;
      return { state: 'closed', ...was };
    }
    this.failures++;
    this.cause = cause;
    if (cfg.breakerFailures <= 0) return null;
    if (probe || (this.openUntil === 0 && this.failures >= cfg.breakerFailures)) {
      this.stats.opened++;
      this.openUntil = now + cfg.breakerCoolMs;
      return { state: 'open', failures: this.failures, cause, until: this.openUntil };
    }
    return null;
  }

  /** A probe that ended with no outcome (its agent went away): the next call probes. */
  abandon(probe: boolean): void {
    if (probe) this.probing = false;
  }
}
