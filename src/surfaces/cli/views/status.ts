import type { LimiterSummary } from '../../../kernel/gateway/limiter.ts';
import { renderKeyValues } from '../table.ts';
import { plural, type View, view } from './format.ts';

/** `warren status`: the verdict first, then one line per part, then what is wrong. */

interface Status {
  status: 'healthy' | 'degraded';
  problems: string[];
  node: { id: string; uptimeMs: number };
  store: { kind: string; head: number; readMs: number };
  commits: { batches: number; failed: number; refused: number; avgMs: number | null; maxMs: number | null };
  delivery: { backlog: number; oldestMs: number | null };
  reconcile: {
    intervalMs: number;
    lastTick: { n: number; at: number; ms: number; errors: unknown[] } | null;
    /** Absent from a server older than this CLI. */
    phases?: Array<{ name: string; seed: string | null }>;
  };
  agents: {
    alive: number;
    starting: number;
    resuming: { done: number; total: number };
    sessions: Array<{ status: string; runtime: string; count: number }>;
  };
  containment?: { setting: string; inForce: string; network: string; reason: string | null };
  /** Absent from a server older than this CLI. */
  gateway?: { enabled: boolean } & Omit<LimiterSummary, Newer> & Partial<Pick<LimiterSummary, Newer>>;
  plugins: string[];
}

/** What a server older than this CLI does not say of its gateway. */
type Newer = 'paced' | 'pacedTotal' | 'breakersOpen' | 'breakerOpened' | 'breakerRefused';

/**
 * `on; 1 provider key: 3 in flight, 0 queued, 1 paced, 0 breakers open; since start 12 queued,
 * 4 retries, 2 back-off waits, 5 paced, breakers opened 0 times (0 calls refused)`.
 */
export function gatewayLine(g: NonNullable<Status['gateway']>): string {
  if (!g.enabled) return 'off (agents call their providers themselves)';
  const now = `${g.inFlight} in flight, ${g.queued} queued`;
  const since = `${g.queuedTotal} queued, ${g.retries} ${g.retries === 1 ? 'retry' : 'retries'}, ${plural(g.waits, 'back-off wait')}`;
  // A server older than this CLI has no pacing or breakers to show.
  if (g.paced === undefined) return `on; ${plural(g.keys, 'provider key')}: ${now}; since start ${since}`;
  return `on; ${plural(g.keys, 'provider key')}: ${now}, ${g.paced} paced, ${plural(g.breakersOpen ?? 0, 'breaker')} open; since start ${since}, ${g.pacedTotal ?? 0} paced, breakers opened ${plural(g.breakerOpened ?? 0, 'time')} (${plural(g.breakerRefused ?? 0, 'call')} refused)`;
}

const duration = (ms: number): string => {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 120 ? `${m}m${s % 60}s` : `${Math.floor(m / 60)}h${m % 60}m`;
};

const render = view<Status>((out, ctx) => {
  const head = `warren is ${out.status} (node ${out.node.id}, up ${duration(out.node.uptimeMs)})\n`;
  const t = out.reconcile.lastTick;
  const resuming = out.agents.resuming;
  const byStatus = new Map<string, number>();
  for (const s of out.agents.sessions) byStatus.set(s.status, (byStatus.get(s.status) ?? 0) + s.count);
  const rows: Array<[string, string]> = [
    ['store', `${out.store.kind}, log head ${out.store.head}, read ${out.store.readMs} ms`],
    [
      'commits',
      out.commits.avgMs === null
        ? 'none yet'
        : `${out.commits.batches} batches, ${out.commits.failed} failed, ${out.commits.refused} refused; last 64: avg ${out.commits.avgMs} ms, max ${out.commits.maxMs} ms`,
    ],
    [
      'delivery',
      out.delivery.backlog === 0
        ? 'nothing pending'
        : `${plural(out.delivery.backlog, 'message')} pending, oldest ${duration(out.delivery.oldestMs ?? 0)}`,
    ],
    [
      'reconcile',
      t
        ? `every ${duration(out.reconcile.intervalMs)}; last tick #${t.n} ${new Date(t.at).toISOString()}, ${Math.round(t.ms)} ms, ${plural(t.errors.length, 'phase error')}`
        : `every ${duration(out.reconcile.intervalMs)}; no tick yet`,
    ],
    // Every phase in order, then seed 001's names with the phases that do that work, so a
    // reader of the seed finds its phases here.
    ...(out.reconcile.phases
      ? [
          ['phases', out.reconcile.phases.map((p) => p.name).join(', ')] as [string, string],
          ['seed 001 phases', seedPhases(out.reconcile.phases)] as [string, string],
        ]
      : []),
    [
      'agents',
      `${out.agents.alive} alive, ${out.agents.starting} starting${resuming.total > 0 && resuming.done < resuming.total ? `; resuming: ${resuming.done} of ${resuming.total}` : ''}`,
    ],
    ['sessions', [...byStatus].map(([s, n]) => `${n} ${s}`).join(', ') || 'none live'],
    ...(out.containment ? [['containment', containmentLine(out.containment)] as [string, string]] : []),
    ...(out.gateway ? [['gateway', gatewayLine(out.gateway)] as [string, string]] : []),
    ['plugins', out.plugins.join(', ')],
  ];
  const problems = out.problems.length ? `problems:\n${out.problems.map((p) => `  - ${p}\n`).join('')}` : '';
  return head + renderKeyValues(rows, ctx) + problems;
});

/** Seed 001's reconciliation loop, in its order. */
const SEED_001_ORDER = ['dispatch', 'lifecycle-cleanup', 'environment-reconciliation', 'orphan-reparent'];

/** `dispatch = orchestration:dispatch, environment-reconciliation = lost-agents + runners:reanimate, …`. */
function seedPhases(phases: Array<{ name: string; seed: string | null }>): string {
  // In the seed's own order; a name it does not list (a plugin's) after them.
  const bySeed = new Map<string, string[]>(SEED_001_ORDER.map((s) => [s, []]));
  for (const p of phases) if (p.seed) bySeed.set(p.seed, [...(bySeed.get(p.seed) ?? []), p.name]);
  return (
    [...bySeed]
      .filter(([, names]) => names.length > 0)
      .map(([seed, names]) => `${seed} = ${names.join(' + ')}`)
      .join(', ') || 'none'
  );
}

/** `bwrap, network full` / `none (containment: none)` / `unavailable: … (agents that run shells are refused)`. */
function containmentLine(c: NonNullable<Status['containment']>): string {
  if (c.inForce === 'bwrap') return `bwrap, network ${c.network}`;
  if (c.inForce === 'none') return 'none: agents run unconfined (containment: none)';
  return `unavailable: ${c.reason ?? 'no bubblewrap'}; agents that can run shell commands are refused`;
}

export const statusViews: Record<string, View> = { status: render };
