import { createHash } from 'node:crypto';
import { Breaker, type BreakerConfig } from './breaker.ts';
import { Pace, type PaceConfig } from './pacing.ts';
import type { Upstream } from './upstreams.ts';

/**
 * One limiter per provider key, shared by every agent whose calls go upstream with it
 * (docs/gateway.md): at most `concurrency` calls in flight on the key, the rest wait their
 * turn in order; and when the provider says to slow down (429, 529) with a `retry-after`,
 * every call on the key waits it out, not only the one that was told, so N agents do not
 * retry in step. A call with a slot is also held to the key's pace (pacing.ts), and refused
 * at once while its breaker is open (breaker.ts).
 */
export interface LimiterConfig extends PaceConfig, BreakerConfig {
  /** Calls in flight per provider key (0: no limit). */
  concurrency: number;
  /** How many times a 429 or 529 answer is retried before it is passed to the agent. */
  retries: number;
  /** The longest one call is held for retries, all waits together (ms). */
  maxRetryWaitMs: number;
}

export const defaultLimiterConfig = (): LimiterConfig => ({
  concurrency: 16,
  retries: 4,
  maxRetryWaitMs: 60_000,
  rpm: 0,
  tpm: 0,
  breakerFailures: 5,
  breakerCoolMs: 30_000,
});

/** How long to wait before retry `attempt` (0-based): the provider's word, else backoff. */
export function retryDelayMs(headers: Record<string, unknown>, attempt: number, now = Date.now()): number {
  const ms = Number(headers['retry-after-ms']);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers['retry-after'];
  if (typeof after === 'string' && after.trim() !== '') {
    const s = Number(after);
    if (Number.isFinite(s) && s >= 0) return s * 1000;
    const at = Date.parse(after);
    if (Number.isFinite(at)) return Math.max(0, at - now);
  }
  // No word from the provider: 0.5 s, 1 s, 2 s, … up to 8 s.
  return Math.min(8000, 500 * 2 ** attempt);
}

/** An answer the limiter holds and retries instead of passing it on. */
export const isRetryable = (status: number | undefined): boolean => status === 429 || status === 529;

export class KeyLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  /** No call on the key starts before this (the provider's latest retry-after). */
  private notBefore = 0;
  private readonly pace = new Pace();
  /** Calls waiting for the key's pace now. */
  private pacing = 0;
  readonly breaker = new Breaker();
  /** Counters for `status`: calls held in the queue, retries made, calls held to the pace. */
  readonly stats = { queued: 0, retries: 0, waits: 0, paced: 0 };

  constructor(private readonly config: () => LimiterConfig) {}

  get inFlight(): number {
    return this.active;
  }

  get queueDepth(): number {
    return this.waiting.length;
  }

  get pacedNow(): number {
    return this.pacing;
  }

  /**
   * A slot on the key (released by the function it resolves to), for a call of about
   * `tokens`, once the key's back-off and pace let it go; rejects when `signal` aborts.
   */
  async acquire(signal: AbortSignal, tokens = 0): Promise<() => void> {
    const limit = this.config().concurrency;
    if (limit > 0 && this.active >= limit) {
      this.stats.queued++;
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal.removeEventListener('abort', gone);
          resolve();
        };
        const gone = () => {
          const i = this.waiting.indexOf(go);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal.reason);
        };
        this.waiting.push(go);
        signal.addEventListener('abort', gone, { once: true });
      });
    } else {
      this.active++;
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next in line.
      if (next) next();
      else this.active--;
    };
    try {
      await this.ready(signal, tokens);
    } catch (error) {
      release(); // gone while the key was backing off: its slot goes on
      throw error;
    }
    return release;
  }

  /**
   * Wait until the call may be sent — the key's back-off over, and its pace not passed by
   * `tokens` more — and count it as sent.
   */
  async ready(signal: AbortSignal, tokens: number): Promise<void> {
    await this.pause(signal);
    const cfg = this.config();
    let ms = this.pace.waitMs(tokens, Date.now(), cfg);
    if (ms > 0) {
      this.stats.paced++;
      this.pacing++;
      try {
        // Others may have gone meanwhile: ask again after each wait.
        while (ms > 0) {
          await sleep(ms, signal);
          await this.pause(signal);
          ms = this.pace.waitMs(tokens, Date.now(), this.config());
        }
      } finally {
        this.pacing--;
      }
    }
    this.pace.take(tokens, Date.now());
  }

  /** A sent call used `delta` tokens more (or fewer) than it was counted at. */
  spent(delta: number): void {
    this.pace.count(delta, Date.now());
  }

  /** An answer's rate-limit headers: what the provider says is left on the key. */
  heard(headers: Record<string, unknown>): void {
    this.pace.heard(headers, Date.now());
  }

  /** The provider asked to wait `ms`: every call on the key waits at least that long. */
  backOff(ms: number, now = Date.now()): void {
    this.stats.retries++;
    this.notBefore = Math.max(this.notBefore, now + ms);
  }

  /** Wait out the key's back-off, if any. */
  async pause(signal: AbortSignal): Promise<void> {
    const ms = this.notBefore - Date.now();
    if (ms <= 0) return;
    this.stats.waits++;
    await sleep(ms, signal);
  }
}

export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', gone);
      resolve();
    }, ms);
    const gone = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', gone, { once: true });
  });

/** The limiters of one kernel, by provider key (a hash of it and its URL: the key is not a map key). */
export class Limiters {
  private readonly byKey = new Map<string, KeyLimiter>();
  /** A session's upstream object to its limiter: no hash per call. */
  private readonly seen = new WeakMap<Upstream, KeyLimiter>();

  constructor(private readonly config: () => LimiterConfig) {}

  of(up: Upstream): KeyLimiter {
    const known = this.seen.get(up);
    if (known) return known;
    const id = createHash('sha256').update(`${up.baseUrl}\0${up.key}`).digest('base64url').slice(0, 22);
    let l = this.byKey.get(id);
    if (!l) {
      l = new KeyLimiter(this.config);
      this.byKey.set(id, l);
    }
    this.seen.set(up, l);
    return l;
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Every key's limiter summed (`warren status`, `/metrics`): never a key, not even hashed. */
  summary(): LimiterSummary {
    const s: LimiterSummary = {
      keys: this.byKey.size,
      inFlight: 0,
      queued: 0,
      queuedTotal: 0,
      retries: 0,
      waits: 0,
      paced: 0,
      pacedTotal: 0,
      breakersOpen: 0,
      breakerOpened: 0,
      breakerRefused: 0,
    };
    for (const l of this.byKey.values()) {
      s.inFlight += l.inFlight;
      s.queued += l.queueDepth;
      s.queuedTotal += l.stats.queued;
      s.retries += l.stats.retries;
      s.waits += l.stats.waits;
      s.paced += l.pacedNow;
      s.pacedTotal += l.stats.paced;
      if (l.breaker.open) s.breakersOpen++;
      s.breakerOpened += l.breaker.stats.opened;
      s.breakerRefused += l.breaker.stats.refused;
    }
    return s;
  }
}

/** The gateway's limiters at a glance: now (in flight, queued) and since start (the totals). */
export interface LimiterSummary {
  /** Provider keys seen. */
  keys: number;
  inFlight: number;
  /** Calls waiting for a slot now. */
  queued: number;
  /** Calls that had to wait for a slot, since start. */
  queuedTotal: number;
  /** 429 and 529 answers held and retried, since start. */
  retries: number;
  /** Calls that waited out a key's back-off, since start. */
  waits: number;
  /** Calls waiting for their key's pace (requests or tokens per minute) now. */
  paced: number;
  /** Calls that waited for their key's pace, since start. */
  pacedTotal: number;
  /** Keys whose circuit breaker is open now (or half-open). */
  breakersOpen: number;
  /** Times a breaker opened, since start. */
  breakerOpened: number;
  /** Calls refused by an open breaker, since start. */
  breakerRefused: number;
}
