import { isDatabaseUnreachable } from '../vocab/unreachable.ts';

/** Whether this process can reach its database now, and if not since when and why. */
export type ReachState = { ok: true } | { ok: false; reason: string; since: number };

/** The first probe after a loss, and the cap its backoff doubles up to. */
const PROBE_FIRST_MS = 250;
const PROBE_MAX_MS = 5000;

/**
 * The database as this process last saw it. Every statement's outcome feeds it (the pools'
 * clients report successes and lost connections), so it needs no traffic of its own while
 * things work; once a connection is lost it probes with backoff until a statement succeeds,
 * so an idle node also learns the database is back. `/healthz` reports it (degraded while
 * unreachable); it never throws and never ends the process.
 */
export class Reachability {
  private down: { reason: string; since: number } | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private backoff = PROBE_FIRST_MS;
  private closed = false;

  constructor(
    /** One cheap statement on a fresh or pooled connection (`select 1`). */
    private readonly probe: () => Promise<unknown>,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): ReachState {
    return this.down ? { ok: false, ...this.down } : { ok: true };
  }

  /** A statement succeeded: the database answers. */
  reached(): void {
    if (!this.down) return;
    this.down = null;
    this.backoff = PROBE_FIRST_MS;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A statement or a connection failed; only failures of reaching the database count. */
  failed(error: unknown): void {
    if (this.closed || !isDatabaseUnreachable(error)) return;
    const reason = (error as Error)?.message || String(error);
    if (this.down) this.down.reason = reason;
    else this.down = { reason, since: this.now() };
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.backoff = Math.min(this.backoff * 2, PROBE_MAX_MS);
      // Its success or failure comes back through `reached` / `failed`, like any statement's.
      this.probe().then(
        () => this.reached(),
        (error) => {
          if (this.down) this.schedule();
          this.failed(error);
        },
      );
    }, this.backoff);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
