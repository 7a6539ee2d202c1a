import { sql } from 'kysely';
import type { BatchStats } from '../store/writer.ts';
import type { KernelContext } from './context.ts';
import type { LimiterSummary } from './gateway/limiter.ts';
import type { TickReport } from './observer.ts';

/** The commit latencies `warren status` summarises: the last 64 batches. */
export class CommitWatch {
  private readonly recent: number[] = [];
  private next = 0;
  batches = 0;
  failed = 0;
  /** Units that refused themselves (bad input, a conflict): answers, not store failures. */
  refused = 0;
  lastAt: number | null = null;

  constructor(private readonly now: () => number) {}

  observe = (b: BatchStats): void => {
    this.batches++;
    if (!b.ok) this.failed++;
    this.refused += b.refused;
    this.lastAt = this.now();
    if (this.recent.length < 64) this.recent.push(b.ms);
    else this.recent[this.next] = b.ms;
    this.next = (this.next + 1) % 64;
  };

  summary(): {
    batches: number;
    failed: number;
    refused: number;
    lastAt: number | null;
    avgMs: number | null;
    maxMs: number | null;
  } {
    const n = this.recent.length;
    const round = (x: number) => Math.round(x * 100) / 100;
    return {
      batches: this.batches,
      failed: this.failed,
      refused: this.refused,
      lastAt: this.lastAt,
      avgMs: n ? round(this.recent.reduce((a, b) => a + b, 0) / n) : null,
      maxMs: n ? round(Math.max(...this.recent)) : null,
    };
  }
}

export interface SessionCount {
  zone: string;
  status: string;
  runtime: string;
  count: number;
}

/** Live (not stopped) sessions by zone, status and runtime: one grouped query. */
export async function countSessions(k: KernelContext): Promise<SessionCount[]> {
  const rows = await k.store.reader
    .selectFrom('sessions')
    .select(['zone', 'status', 'runtime', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('status', '!=', 'stopped')
    .groupBy(['zone', 'status', 'runtime'])
    .execute();
  return rows.map((r) => ({ zone: r.zone, status: r.status, runtime: r.runtime, count: Number(r.n) }));
}

export interface KernelHealth {
  uptimeMs: number;
  /** `error` when the store could not be read (head and sessions are then unknown: 0 and none). */
  store: { kind: string; head: number; readMs: number; error?: string };
  commits: ReturnType<CommitWatch['summary']>;
  delivery: { backlog: number; oldestMs: number | null };
  /** `phases`: in order, each with seed 001's name for it where warren's differs. */
  reconcile: {
    intervalMs: number;
    lastTick: TickReport | null;
    phases: Array<{ name: string; seed: string | null }>;
  };
  agents: { alive: number; starting: number; resuming: { done: number; total: number } };
  /** The model gateway: on or off, and its limiters per provider key (docs/gateway.md). */
  gateway: { enabled: boolean } & LimiterSummary;
  sessions: SessionCount[];
  /** How this node confines agent processes (containment.ts). */
  containment: {
    setting: string;
    inForce: 'bwrap' | 'none' | 'unavailable';
    network: 'full' | 'none';
    reason: string | null;
  };
}

/** What the kernel knows of its own health; the store is asked (a read of the log head), and an unreachable one is reported, not thrown. */
export async function kernelHealth(
  k: KernelContext,
  commits: CommitWatch,
  lastTick: TickReport | undefined,
  startedAt: number,
  phases: ReadonlyArray<{ name: string; seed?: string }> = [],
): Promise<KernelHealth> {
  const t0 = performance.now();
  let head = 0;
  let sessions: SessionCount[] = [];
  let error: string | undefined;
  try {
    const r = await sql<{ seq: number | string }>`select seq from log_head where id = 1`.execute(
      k.store.reader,
    );
    head = Number(r.rows[0]?.seq ?? 0);
    sessions = await countSessions(k);
  } catch (e) {
    error = (e as Error)?.message ?? String(e);
  }
  const readMs = Math.round((performance.now() - t0) * 100) / 100;
  const backlog = k.delivery.backlog();
  const now = k.clock.now();
  return {
    uptimeMs: now - startedAt,
    store: { kind: k.store.kind, head, readMs, ...(error !== undefined ? { error } : {}) },
    commits: commits.summary(),
    delivery: {
      backlog: backlog.messages,
      oldestMs: backlog.oldestTs === null ? null : now - backlog.oldestTs,
    },
    reconcile: {
      intervalMs: k.config.reconcileIntervalMs,
      lastTick: lastTick ?? null,
      phases: phases.map((p) => ({ name: p.name, seed: p.seed ?? null })),
    },
    agents: { ...k.supervisor.counts(), resuming: { ...k.supervisor.resuming } },
    gateway: { enabled: k.config.gateway.enabled, ...k.gateway.limiters.summary() },
    sessions,
    containment: {
      setting: k.supervisor.containment.setting,
      inForce: k.supervisor.containment.inForce,
      network: k.config.containmentNetwork,
      reason: k.supervisor.containment.reason,
    },
  };
}
