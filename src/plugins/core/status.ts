import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';
import { directoryOf } from './instance.ts';

/**
 * `warren status`: the server's health in one answer, for operators and scripts. Healthy
 * unless a check below finds a problem; the CLI exits 0 healthy, 1 degraded, 2 unreachable.
 */

/** A message waiting this long for a live agent means delivery is stuck, not busy. */
export const DEFAULT_MAX_LAG_MS = 60_000;
/** Ticks missed before the loop counts as stalled. */
const STALLED_TICKS = 3;

const tick = z.object({
  n: z.number(),
  at: z.number(),
  ms: z.number(),
  errors: z.array(z.object({ phase: z.string(), message: z.string() })),
});

const output = z.object({
  status: z.enum(['healthy', 'degraded']),
  problems: z.array(z.string()),
  node: z.object({ id: z.string(), uptimeMs: z.number() }),
  store: z.object({
    kind: z.string(),
    reachable: z.boolean(),
    head: z.number(),
    readMs: z.number(),
    error: z.string().optional(),
  }),
  commits: z.object({
    batches: z.number(),
    failed: z.number().describe('Batches the store failed to commit'),
    refused: z
      .number()
      .describe('Requests refused with their own error (bad input, a conflict): not failures'),
    lastAt: z.number().nullable(),
    avgMs: z.number().nullable(),
    maxMs: z.number().nullable(),
  }),
  delivery: z.object({ backlog: z.number(), oldestMs: z.number().nullable(), maxLagMs: z.number() }),
  reconcile: z.object({
    intervalMs: z.number(),
    lastTick: tick.nullable(),
    phases: z
      .array(
        z.object({
          name: z.string(),
          seed: z.string().nullable().describe("Seed 001's name for this phase, where warren's differs"),
        }),
      )
      .describe('The phases of a tick, in order'),
  }),
  agents: z.object({
    alive: z.number(),
    starting: z.number(),
    resuming: z.object({ done: z.number(), total: z.number() }),
    /** Live sessions of the caller's zone. */
    sessions: z.array(z.object({ status: z.string(), runtime: z.string(), count: z.number() })),
  }),
  /**
   * How agent processes are confined: `inForce` bwrap, none (the operator's `containment:
   * none`), or unavailable (`auto` found no bubblewrap: agents that run shells are refused).
   */
  /** The model gateway and its limiters per provider key, summed (docs/gateway.md). */
  gateway: z.object({
    enabled: z.boolean(),
    keys: z.number(),
    inFlight: z.number(),
    queued: z.number(),
    queuedTotal: z.number(),
    retries: z.number(),
    waits: z.number(),
    paced: z.number(),
    pacedTotal: z.number(),
    breakersOpen: z.number(),
    breakerOpened: z.number(),
    breakerRefused: z.number(),
  }),
  containment: z.object({
    setting: z.string(),
    inForce: z.enum(['bwrap', 'none', 'unavailable']),
    network: z.enum(['full', 'none']),
    reason: z.string().nullable(),
  }),
  plugins: z.array(z.string()),
});

export const status = defineSyscall({
  name: 'status',
  group: 'operator',
  summary: "The server's health: store, commits, delivery lag, reconcile loop, agents, plugins",
  description:
    'degraded when the store cannot be read, the last reconcile tick had phase errors, the loop has stalled, or a message has waited longer than maxLagMs for a live agent. `warren status` exits 0 healthy, 1 degraded, 2 when the server cannot be reached.',
  input: z.object({
    // Coerced: it arrives as text in a REST query string and on the command line.
    maxLagMs: z.coerce
      .number()
      .int()
      .positive()
      .max(86_400_000)
      .optional()
      .describe(`Delivery lag that counts as degraded (default ${DEFAULT_MAX_LAG_MS} ms)`),
  }),
  output,
  callers: ['operator'],
  jobs: ['operator'],
  http: { method: 'GET', path: '/v1/status' },
  cli: {
    command: ['status'],
    examples: ['warren status', 'warren status --json', 'warren status --max-lag-ms 5000 || page-someone'],
    exit: { field: 'status', codes: { healthy: 0, degraded: 1 }, unreachable: 2 },
  },
  handler: async (ctx, input) => {
    const { kernel, principal } = ctx;
    const h = await kernel.health();
    const maxLagMs = input.maxLagMs ?? DEFAULT_MAX_LAG_MS;
    const problems: string[] = [];
    if (h.store.error !== undefined) problems.push(`the store cannot be read: ${h.store.error}`);
    const seedOf = new Map(h.reconcile.phases.map((p) => [p.name, p.seed]));
    for (const e of h.reconcile.lastTick?.errors ?? []) {
      const seed = seedOf.get(e.phase);
      problems.push(`reconcile phase ${e.phase}${seed ? ` (seed 001: ${seed})` : ''} failed: ${e.message}`);
    }
    const now = kernel.clock.now();
    const stallAfter = STALLED_TICKS * h.reconcile.intervalMs;
    const lastAt = h.reconcile.lastTick?.at ?? null;
    if (h.uptimeMs > stallAfter && (lastAt === null || now - lastAt > stallAfter))
      problems.push(
        `the reconcile loop has not ticked for ${lastAt === null ? h.uptimeMs : now - lastAt} ms`,
      );
    if (h.delivery.oldestMs !== null && h.delivery.oldestMs > maxLagMs)
      problems.push(
        `delivery lags: a message has waited ${h.delivery.oldestMs} ms for its agent (${h.delivery.backlog} pending)`,
      );
    return {
      status: problems.length ? ('degraded' as const) : ('healthy' as const),
      problems,
      node: { id: kernel.config.nodeId, uptimeMs: h.uptimeMs },
      store: { ...h.store, reachable: h.store.error === undefined },
      commits: h.commits,
      delivery: { ...h.delivery, maxLagMs },
      reconcile: h.reconcile,
      agents: {
        alive: h.agents.alive,
        starting: h.agents.starting,
        resuming: h.agents.resuming,
        sessions: h.sessions
          .filter((s) => s.zone === principal.zone)
          .map(({ status, runtime, count }) => ({ status, runtime, count })),
      },
      gateway: h.gateway,
      containment: h.containment,
      plugins: [...directoryOf(ctx).loadedNames],
    };
  },
});

export const statusSyscalls = [status];
