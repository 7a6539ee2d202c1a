import { dirname, join, resolve } from 'node:path';
import type { Authority } from '../auth/authenticate.ts';
import { BrowserLogin } from '../auth/browser-login.ts';
import { BrowserSessions } from '../auth/browser-sessions.ts';
import { type JwtOptions, JwtVerifier } from '../auth/jwt.ts';
import { OperatorKeyCache } from '../auth/key-cache.ts';
import { loadSecret } from '../auth/secret.ts';
import { TokenSigner } from '../auth/tokens.ts';
import { Cluster } from '../cluster/cluster.ts';
import { type ClusterConfig, defaultClusterConfig } from '../cluster/config.ts';
import { deriveNodeId } from '../cluster/node-id.ts';
import type { InputLimits, SyscallContext } from '../contract/syscall.ts';
import { defaultKernelConfig, type KernelConfig } from '../kernel/config.ts';
import { resolveContainment } from '../kernel/containment.ts';
import { Kernel } from '../kernel/kernel.ts';
import { ownerCondition } from '../kernel/ownership.ts';
import { loadSecretsKey } from '../kernel/secrets-key.ts';
import type { WarrenMetrics } from '../observability/metrics.ts';
import type { SyscallTracer, TracingOptions } from '../observability/tracing.ts';
import { builtinRuntimes } from '../runtimes/registry.ts';
import type { Runtime } from '../runtimes/types.ts';
import { type Durability, isPostgresUrl, splitSchema } from '../store/dialect.ts';
import type { LogEvent } from '../store/events.ts';
import { Store } from '../store/store.ts';
import { type Clock, systemClock } from '../util/clock.ts';
import { createIds, type IdGenerator } from '../util/ids.ts';
import { type Log, stderrLog } from '../util/log.ts';
import { slowStep } from '../util/slow-step.ts';
import { WarrenError } from '../vocab/errors.ts';
import { type Principal, principalId } from '../vocab/principal.ts';
import { DATABASE_RETRY_AFTER_S } from '../vocab/unreachable.ts';
import { Contributions } from './contributions.ts';
import { DEFAULT_LIMITS, type DispatchPolicy, dispatch, type SyscallTable } from './dispatch.ts';
import { Gate, type GatingPolicy } from './gate.ts';
import { PluginHost, type PluginSelection } from './host.ts';
import { CALL_SLICE_MS, CALLS_PER_TURN, LoopShare } from './loop-share.ts';
import { builtinPlugins } from './plugins.ts';

export interface WarrenOptions {
  /** A SQLite file or a postgres:// URL; default `<dataDir>/warren.db`. */
  db?: string;
  dataDir?: string;
  durability?: Durability;
  /** PostgreSQL schema (tests). */
  schema?: string;
  /** SQLite: the longest a search runs (in its worker thread) before it is stopped; default 10 s. */
  maxSearchMs?: number;
  /** PostgreSQL: the reader pool's size; default 8. */
  dbPoolMax?: number;
  kernel?: Partial<KernelConfig>;
  /** Several nodes on one PostgreSQL database (docs/scaling.md); `mode: 'on'` on SQLite is an error. */
  cluster?: Partial<ClusterConfig>;
  /** Do not resume sessions yet (a server calls `kernel.resumeLost()` once it listens). */
  deferResume?: boolean;
  runtimes?: Runtime[];
  /** Override the default tool sets of the depth tiers. */
  gating?: GatingPolicy;
  clock?: Clock;
  ids?: IdGenerator;
  /** Caps on prompt and message sizes (bytes); defaults in `DEFAULT_LIMITS`. */
  limits?: Partial<InputLimits>;
  /**
   * Which plugins: `seed` fills the `plugins` rows of a fresh database (WARREN_PLUGINS),
   * `config` is each plugin's settings; `known` replaces the built-in set (tests).
   */
  plugins?: Partial<PluginSelection>;
  /** Prometheus metrics (`GET /metrics`); default on. Off, prom-client is never loaded. */
  metrics?: boolean;
  /** Where diagnostics go (a server passes its pino logger); default: errors on stderr. */
  log?: Log;
  /** OpenTelemetry traces, a span per syscall; off unless given. */
  tracing?: TracingOptions;
  /** Accept bearer JWTs of this issuer as well (operators of the token's zone). */
  jwt?: JwtOptions;
  /** The most calls that start in one turn of the loop (loop-share.ts); default CALLS_PER_TURN. */
  callsPerTurn?: number;
  /** After a turn's first call, more start only while it has spent less (ms); default CALL_SLICE_MS. */
  callSliceMs?: number;
}

/** What a surface passes along with a call besides the input. */
export type CallExtra = Pick<SyscallContext, 'signal' | 'progress'> & {
  /** The W3C `traceparent` the client sent: the syscall's span joins its trace. */
  traceparent?: string;
};

/** One warren: a store, a kernel over it and the syscall table every surface calls. */
export class Warren implements Authority {
  /** Verifies bearer JWTs of an external issuer, when one is configured (auth/jwt.ts). */
  jwt: JwtVerifier | null = null;
  /** Operator keys verified live (null in a cluster, where another node may revoke one). */
  operatorKeys: OperatorKeyCache | null = null;
  /** What dispatch checks every call against; its parts never change, so it is built once. */
  private readonly dispatchPolicy: DispatchPolicy;

  private constructor(
    readonly store: Store,
    readonly kernel: Kernel,
    readonly table: SyscallTable,
    readonly gate: Gate,
    /** Signs and checks session tokens; the secret itself never leaves it. */
    readonly tokens: TokenSigner,
    readonly limits: InputLimits,
    /** The loaded plugins (core first), their instances and their syscalls. */
    readonly plugins: PluginHost,
    /** This warren's metrics, or null when they are off. */
    readonly metrics: WarrenMetrics | null,
    readonly log: Log,
    private readonly tracer: SyscallTracer | null,
    /** This node's part in a cluster on PostgreSQL; null alone (SQLite, or clustering off). */
    readonly cluster: Cluster | null,
    /** Which calls start in this turn of the loop, and which wait, round robin by caller. */
    private readonly share: LoopShare,
  ) {
    this.browser = new BrowserLogin(this, new BrowserSessions(store, kernel.clock, kernel.ids));
    this.dispatchPolicy = { gate, limits, absent: plugins.absent, self: (name) => plugins.instance(name) };
    this.contributions = new Contributions(plugins.loaded, {
      table,
      gate,
      kernel,
      resolve: (p) => (p.kind === 'session' && !p.tools ? this.withTools(p) : Promise.resolve(p)),
      self: (name) => plugins.instance(name),
      call: (p, name, input) => this.call(p, name, input),
    });
  }

  /** What the plugins offer besides syscalls (completions, resources, prompts), through the gate. */
  readonly contributions: Contributions;
  /** Browser logins (cookie sessions, one-time login links): each names an operator, as its key does. */
  readonly browser: BrowserLogin;

  static async open(opts: WarrenOptions = {}): Promise<Warren> {
    const clock = opts.clock ?? systemClock;
    const ids = opts.ids ?? createIds(clock);
    const log = opts.log ?? stderrLog;
    const url = opts.db ?? join(opts.dataDir ?? '.warren', 'warren.db');
    const clusterConfig = { ...defaultClusterConfig(), ...opts.cluster };
    // Before anything is opened: a bad count throws here, leaving nothing to close.
    const share = new LoopShare(opts.callsPerTurn ?? CALLS_PER_TURN, opts.callSliceMs ?? CALL_SLICE_MS);
    // The bubblewrap probe is a child process: it runs while the store opens and migrates
    // (the kernel awaits it in its start; a failure is reported there).
    const containment = resolveContainment(opts.kernel?.containment ?? defaultKernelConfig().containment);
    containment.catch(() => {});
    if (clusterConfig.mode === 'on' && !isPostgresUrl(url)) {
      throw new Error(
        'several nodes need PostgreSQL (--db postgres://…): a SQLite file belongs to one node (docs/scaling.md)',
      );
    }
    const store = await Store.open(
      {
        url,
        durability: opts.durability ?? 'process',
        ...(opts.schema ? { schema: opts.schema } : {}),
        ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
        ...(opts.maxSearchMs !== undefined ? { heavyReadMs: opts.maxSearchMs } : {}),
        ...(opts.dbPoolMax !== undefined ? { poolSize: opts.dbPoolMax } : {}),
        // Each node's connections are findable in pg_stat_activity (and can be ended there).
        applicationName: `warren ${opts.kernel?.nodeId ?? defaultNodeId(opts, url)}`,
      },
      clock,
      ids,
    );
    let tokens: TokenSigner;
    let secretsKey: Uint8Array;
    let plugins: PluginHost;
    store.writer.log = log;
    // Loaded only when asked for: a warren without them pays nothing.
    const tracer = opts.tracing
      ? (await import('../observability/tracing.ts')).openTracer({
          nodeId: defaultNodeId(opts, url),
          ...opts.tracing,
        })
      : null;
    if (tracer) store.writer.carry = tracer.carry;
    try {
      tokens = new TokenSigner(await loadSecret(store, keyDir(opts, url)));
      secretsKey = await loadSecretsKey(store, keyDir(opts, url));
      plugins = await PluginHost.prepare(store, { known: builtinPlugins(), ...opts.plugins });
    } catch (error) {
      await store.close();
      throw error;
    }
    const table = plugins.table;
    const gate = new Gate(
      table,
      opts.gating,
      new Set(plugins.loaded.filter((p) => p.jwtCallers).map((p) => p.name)),
    );
    const runtimes = builtinRuntimes(opts.runtimes);
    const kernel = new Kernel({
      store,
      runtimes,
      clock,
      ids,
      toolPolicy: (spec, parentTools, allowlist, grants) =>
        gate.forSpawn(spec, parentTools, allowlist, grants),
      toolsOf: (row) => toolsOfRow(gate, row.tools, row.depth),
      mintToken: (sessionId, gen) => tokens.mint(sessionId, gen),
      secretsKey,
      config: {
        nodeId: defaultNodeId(opts, url),
        // No confined agent sees the data dir (its keys, its database, its sockets).
        privateDirs: [keyDir(opts, url)].filter((d): d is string => d !== null).map((d) => resolve(d)),
        ...opts.kernel,
      },
      log,
      containment,
      ...(tracer ? { traceContext: () => tracer.traceparent() } : {}),
    });
    const limits = { ...DEFAULT_LIMITS, ...opts.limits };
    const metrics =
      opts.metrics === false
        ? null
        : new (await import('../observability/metrics.ts')).WarrenMetrics(store, kernel);
    metrics?.attach();
    const pg = store.kind === 'postgres' && clusterConfig.mode !== 'off' ? splitSchema(url) : null;
    const cluster = pg
      ? new Cluster({
          store,
          kernel,
          clock,
          log,
          config: clusterConfig,
          url: pg.url,
          schema: opts.schema ?? pg.schema,
          runtimes: [...runtimes.keys()],
        })
      : null;
    const warren = new Warren(
      store,
      kernel,
      table,
      gate,
      tokens,
      limits,
      plugins,
      metrics,
      log,
      tracer,
      cluster,
      share,
    );
    if (opts.jwt) warren.jwt = new JwtVerifier(opts.jwt);
    if (!cluster) warren.operatorKeys = new OperatorKeyCache(store);
    const call = (principal: Principal, name: string, input: unknown) => warren.call(principal, name, input);
    kernel.setInvoker(call);
    try {
      await cluster?.join();
      await kernel.start({ deferResume: opts.deferResume ?? false });
      await cluster?.start();
      await plugins.start(kernel, store, call, {
        metrics: metrics?.registry ?? null,
        log,
        dataDir: keyDir(opts, url),
      });
    } catch (error) {
      await plugins.stop();
      await kernel.shutdown();
      await cluster?.stop();
      metrics?.close();
      await tracer?.shutdown();
      await store.close();
      throw error;
    }
    return warren;
  }

  /** Calls waiting for a later turn of the loop (loop-share.ts). */
  get callsWaiting(): number {
    return this.share.queued;
  }

  /** Call a syscall: the path every surface takes (dispatch looks it up and gates it). */
  call(principal: Principal, name: string, input: unknown, extra: CallExtra = {}): Promise<unknown> {
    const tracer = this.tracer;
    const start = tracer
      ? // Async, so that a throw in the tracer rejects like every other failure of a call.
        async () =>
          tracer.syscall(principal, name, input, extra.traceparent, () =>
            this.run(principal, name, input, extra),
          )
      : () => this.run(principal, name, input, extra);
    return this.share.admit(principalId(principal), start);
  }

  private async run(principal: Principal, name: string, input: unknown, extra: CallExtra): Promise<unknown> {
    this.checkServing();
    // In-process agents call with a bare principal; surfaces bring one `authenticate` built.
    const who =
      principal.kind === 'session' && !principal.tools ? await this.withTools(principal) : principal;
    const ctx: Omit<SyscallContext, 'self'> = {
      principal: who,
      kernel: this.kernel,
      signal: extra.signal,
      progress: extra.progress,
    };
    // In a cluster an agent's every write is conditioned on its session being this node's
    // under its current epoch (issue 26): a node that lost it writes nothing more for it.
    if (who.kind === 'session' && this.kernel.node.clustered) {
      const check = ownerCondition(this.kernel.node, who.sessionId);
      return this.store.writer.conditions.run(check, () =>
        dispatch(this.table, this.dispatchPolicy, ctx, name, input),
      );
    }
    return dispatch(this.table, this.dispatchPolicy, ctx, name, input);
  }

  /**
   * Every batch any node commits, in seq order (a surface's live fan-out: resource
   * subscriptions); the listener must not block or throw. Returns the unsubscribe.
   */
  onAnyCommit(listener: (events: readonly LogEvent[]) => void): () => void {
    return this.store.writer.onAnyCommit(listener);
  }

  /**
   * What `/healthz` says: `{ ok: true }`, or degraded and why (the database unreachable, the
   * node's lease not held). Read from memory, never from the database: it answers while the
   * database does not.
   */
  health(): { ok: true } | { ok: false; status: 'degraded'; reason: string; since: number } {
    const fenced = this.cluster?.degraded();
    const reach = this.store.reach;
    // Both may hold at once (an outage longer than the lease fences the node): say both.
    const why = [
      ...(reach.ok ? [] : [{ reason: `database unreachable: ${reach.reason}`, since: reach.since }]),
      ...(fenced ? [fenced] : []),
    ];
    if (why.length === 0) return { ok: true };
    return {
      ok: false,
      status: 'degraded',
      reason: why.map((w) => w.reason).join('; '),
      since: Math.min(...why.map((w) => w.since)),
    };
  }

  /**
   * Throws `unavailable` while this node holds no cluster lease: it writes nothing then (another
   * node may own its sessions by now), and answers at once rather than on a database that may
   * not answer. Surfaces call it before they authenticate (which reads the database).
   */
  checkServing(): void {
    if (!this.cluster?.fenced()) return;
    throw new WarrenError(
      'unavailable',
      'this node is fenced (its cluster lease is not held); retry shortly',
      {
        retryAfterS: DATABASE_RETRY_AFTER_S,
      },
    );
  }

  /** A session principal with its tool set, read from its row. */
  async withTools(principal: Extract<Principal, { kind: 'session' }>): Promise<Principal> {
    const row = await this.store.reader
      .selectFrom('sessions')
      .select(['tools', 'depth'])
      .where('id', '=', principal.sessionId)
      .executeTakeFirst();
    return { ...principal, tools: this.toolsOf(row?.tools ?? null, row?.depth ?? principal.depth) };
  }

  /** A session row's tools: its stored set, or the defaults of a session at its depth. */
  toolsOf(tools: string | null, depth: number): readonly string[] {
    return toolsOfRow(this.gate, tools, depth);
  }

  async close(): Promise<void> {
    await slowStep(this.log, 'shutdown: stopping plugins', () => this.plugins.stop());
    await slowStep(this.log, 'shutdown: stopping agents', () => this.kernel.shutdown());
    // After its agents stopped: the lease ends now and the other nodes take its sessions.
    await slowStep(this.log, 'shutdown: leaving the cluster', async () => this.cluster?.stop());
    this.metrics?.close();
    // Finished spans are sent before the store closes; an exporter that cannot reach its
    // collector must not keep the server from stopping.
    await this.tracer?.shutdown().catch((error) => this.log.warn({ err: error }, 'trace export failed'));
    await this.store.close();
  }
}

const toolsOfRow = (gate: Gate, tools: string | null, depth: number): readonly string[] =>
  tools === null ? gate.defaultsFor(depth) : (JSON.parse(tools) as string[]);

/** Where key files (the token secret, the secrets key) live: the data dir, else beside a SQLite file; none in memory. */
function keyDir(opts: WarrenOptions, url: string): string | null {
  if (opts.dataDir) return opts.dataDir;
  if (url === ':memory:' || url.startsWith('file::memory:')) return null;
  return dirname(url);
}

/**
 * This node, when the caller names none: one per database location (see deriveNodeId), so
 * two warrens side by side (tests, several data dirs on a host) never end each other's agents.
 */
function defaultNodeId(opts: WarrenOptions, url: string): string {
  const db = opts.schema ? `${url}${url.includes('?') ? '&' : '?'}schema=${opts.schema}` : url;
  return deriveNodeId(opts.dataDir ?? (isPostgresUrl(url) ? '.warren' : dirname(url)), db);
}
