import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SessionCount } from '../kernel/health.ts';
import type { Kernel } from '../kernel/kernel.ts';
import type { LogEvent } from '../store/events.ts';
import type { Store } from '../store/store.ts';
import { HotCounter, HotHistogram } from './hot.ts';

/** How long a scrape's session counts are reused: scrapes stay one cheap query per window. */
export const SESSIONS_CACHE_MS = 2_000;

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DELIVERY_SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const BATCH_UNITS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/**
 * One warren's Prometheus metrics (`GET /metrics`), on a registry of its own: prom-client's
 * global registry is never used, so two warrens in one process keep separate numbers. It
 * listens to the writer (commits, batches) and the kernel's observer hooks (delivery,
 * reconcile phases); surfaces report HTTP requests and MCP calls; sessions and agent
 * processes are read when scraped. Plugins add their own through their context.
 */
export class WarrenMetrics {
  readonly registry = new Registry();
  private readonly detach: Array<() => void> = [];
  private readonly events: HotCounter;
  private readonly batchUnits: HotHistogram;
  /** The last committed seq: read into its gauge when scraped, not set per batch. */
  private lastSeq = 0;
  private readonly commitSeconds: HotHistogram;
  private readonly delivery: HotHistogram;
  private readonly phaseSeconds: Histogram<'phase'>;
  private readonly phaseErrors: Counter<'phase'>;
  /** Counted per call and per request: plain numbers too. */
  private readonly mcp: HotCounter;
  private readonly http: HotCounter;
  private sessionsCache: { at: number; rows: Promise<SessionCount[]> } | undefined;
  /** Each HTTP surface's count of its live MCP sessions, read when scraped. */
  private readonly mcpSessionCounts = new Set<() => number>();

  constructor(
    private readonly store: Store,
    private readonly kernel: Kernel,
  ) {
    const registers = [this.registry];
    // The commit and delivery paths run per batch and per message: plain numbers (hot.ts).
    this.events = new HotCounter(
      'warren_events_appended_total',
      'Events committed to the action log, by type',
      ['type'],
    ).register(this.registry);
    const head = () => this.lastSeq;
    new Gauge({
      name: 'warren_log_head_seq',
      help: 'The last committed seq this node has seen',
      registers,
      collect() {
        this.set(head());
      },
    });
    this.batchUnits = new HotHistogram(
      'warren_commit_batch_units',
      'Write units per group-commit batch',
      BATCH_UNITS,
    ).register(this.registry);
    this.commitSeconds = new HotHistogram(
      'warren_commit_duration_seconds',
      'Time a group-commit batch takes, from its first unit to its commit',
      SECONDS,
      'outcome',
    ).register(this.registry);
    this.delivery = new HotHistogram(
      'warren_delivery_latency_seconds',
      'From a message committing to its being handed to an agent (async fds)',
      DELIVERY_SECONDS,
    ).register(this.registry);
    this.phaseSeconds = new Histogram({
      name: 'warren_reconcile_phase_duration_seconds',
      help: 'Time each reconcile phase takes',
      labelNames: ['phase'],
      buckets: SECONDS,
      registers,
    });
    this.phaseErrors = new Counter({
      name: 'warren_reconcile_phase_errors_total',
      help: 'Reconcile phases that failed, by phase',
      labelNames: ['phase'],
      registers,
    });
    this.mcp = new HotCounter(
      'warren_mcp_calls_total',
      'MCP tool calls, by tool and outcome (ok, or the error code)',
      ['tool', 'outcome'],
    ).register(this.registry);
    this.http = new HotCounter(
      'warren_http_requests_total',
      'HTTP requests, by method, route pattern and status',
      ['method', 'route', 'status'],
    ).register(this.registry);
    const sessions = this.sessionCounts.bind(this);
    new Gauge({
      name: 'warren_sessions',
      help: 'Live (not stopped) sessions, by zone, status and runtime',
      labelNames: ['zone', 'status', 'runtime'],
      registers,
      async collect() {
        const rows = await sessions();
        this.reset();
        for (const r of rows) this.set({ zone: r.zone, status: r.status, runtime: r.runtime }, r.count);
      },
    });
    const mcpSessionCounts = this.mcpSessionCounts;
    new Gauge({
      name: 'warren_mcp_sessions',
      help: 'Live MCP sessions over Streamable HTTP on this node (every caller)',
      registers,
      collect() {
        let n = 0;
        for (const count of mcpSessionCounts) n += count();
        this.set(n);
      },
    });
    const limiters = () => kernel.gateway.limiters.summary();
    new Gauge({
      name: 'warren_gateway_calls',
      help: 'Model calls at the gateway now, over every provider key (state: in_flight, queued for a slot, or paced: waiting for the key’s rate)',
      labelNames: ['state'],
      registers,
      collect() {
        const s = limiters();
        this.set({ state: 'in_flight' }, s.inFlight);
        this.set({ state: 'queued' }, s.queued);
        this.set({ state: 'paced' }, s.paced);
      },
    });
    new Gauge({
      name: 'warren_gateway_breakers_open',
      help: 'Provider keys whose circuit breaker is open (or half-open) now',
      registers,
      collect() {
        this.set(limiters().breakersOpen);
      },
    });
    // Totals kept by the limiters themselves: read when scraped.
    for (const [name, help, of] of [
      [
        'warren_gateway_queued_total',
        'Model calls that waited for a slot on their provider key',
        'queuedTotal',
      ],
      ['warren_gateway_retries_total', '429 and 529 answers the gateway held and retried', 'retries'],
      ['warren_gateway_backoff_waits_total', "Model calls that waited out their key's back-off", 'waits'],
      [
        'warren_gateway_paced_total',
        "Model calls that waited for their key's pace (requests or tokens per minute)",
        'pacedTotal',
      ],
      [
        'warren_gateway_breaker_opened_total',
        "Times a provider key's circuit breaker opened",
        'breakerOpened',
      ],
      [
        'warren_gateway_breaker_refused_total',
        "Model calls refused at once by their key's open circuit breaker",
        'breakerRefused',
      ],
    ] as const) {
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(limiters()[of]);
        },
      });
    }
    new Gauge({
      name: 'warren_agent_processes',
      help: 'Agent processes this node runs (state: alive, or starting)',
      labelNames: ['state'],
      registers,
      collect() {
        const c = kernel.agentCounts();
        this.set({ state: 'alive' }, c.alive);
        this.set({ state: 'starting' }, c.starting);
      },
    });
  }

  /** Start listening to the writer and the kernel. */
  attach(): void {
    // Series bound once: the hot paths never look a label up.
    const commitOk = this.commitSeconds.series('ok');
    const commitFailed = this.commitSeconds.series('failed');
    const units = this.batchUnits.series();
    const delivery = this.delivery.series();
    this.detach.push(
      this.store.writer.onCommit((events) => this.committed(events)),
      this.store.writer.onBatch((b) => {
        units.observe(b.units);
        (b.ok ? commitOk : commitFailed).observe(b.ms / 1000);
      }),
      this.kernel.observe({
        delivered: (events, at) => {
          for (const e of events) delivery.observe(Math.max(0, at - e.ts) / 1000);
        },
        reconcilePhase: (phase, ms, error) => {
          this.phaseSeconds.observe({ phase }, ms / 1000);
          if (error !== undefined) this.phaseErrors.inc({ phase });
        },
      }),
    );
  }

  close(): void {
    for (const d of this.detach.splice(0)) d();
  }

  /** An HTTP surface's live MCP sessions, counted at each scrape until the result is called. */
  watchMcpSessions(count: () => number): () => void {
    this.mcpSessionCounts.add(count);
    return () => this.mcpSessionCounts.delete(count);
  }

  mcpCall(tool: string, outcome: string): void {
    this.mcp.cell(tool, outcome).n++;
  }

  httpRequest(method: string, route: string, status: number): void {
    this.http.cell(method, route, String(status)).n++;
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  private committed(events: readonly LogEvent[]): void {
    for (const e of events) this.events.cell(e.type).n++;
    this.lastSeq = events[events.length - 1]!.seq;
  }

  private sessionCounts(): Promise<SessionCount[]> {
    const now = this.kernel.clock.now();
    if (!this.sessionsCache || now - this.sessionsCache.at >= SESSIONS_CACHE_MS) {
      const rows = this.kernel.countSessions();
      // A failed read is not cached: the next scrape asks again.
      rows.catch(() => {
        this.sessionsCache = undefined;
      });
      this.sessionsCache = { at: now, rows };
    }
    return this.sessionsCache.rows;
  }
}
