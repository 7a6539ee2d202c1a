import type {
  AgentContext,
  AgentGateway,
  AgentHandle,
  AgentSink,
  AgentSpec,
  GatewayProvider,
  RuntimeRegistry,
} from '../runtimes/types.ts';
import type { SessionsTable } from '../store/schema.ts';
import { parseJson } from '../util/json.ts';
import { WarrenError } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';
import { endAfterTerm, parseIds } from './budget.ts';
import {
  agentConfinement,
  type ContainmentState,
  type SessionContainment,
  type SessionNetwork,
  sessionContainment,
  undecided,
} from './containment.ts';
import type { Core } from './core.ts';
import type { Delivery } from './delivery.ts';
import { Environments, LOCAL_ENVIRONMENT } from './environments.ts';
import type { ModelGateway } from './gateway/gateway.ts';
import { runnerUpstream } from './gateway/runner-upstream.ts';
import { grantsOfRow, type NetworkGrant } from './grants.ts';
import { endSession } from './lifecycle.ts';
import { sessionById } from './lookup.ts';
import { claim, claimable } from './ownership.ts';
import { agentSink, ReportQueue, type SinkHooks } from './reports.ts';
import { resolveSecretEnv, scrubbingSink } from './secrets.ts';
import { setStatus } from './status.ts';

/** Where a sandbox without network reaches warren's HTTP port on the host (null: not listening). */
function loopback(publicUrl: string | null): { host: string; port: number } | null {
  if (!publicUrl) return null;
  try {
    const u = new URL(publicUrl);
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    const host = u.hostname.replace(/^\[|\]$/g, '');
    return { host: host === 'localhost' ? '127.0.0.1' : host, port };
  } catch {
    return null;
  }
}

/** The mark every agent process of a node carries (letters, digits, `_` and `-` only). */
export const markPrefix = (nodeId: string) => `w${nodeId.replace(/[^A-Za-z0-9_-]/g, '_')}`;

export type SyscallInvoker = (
  principal: Principal,
  name: string,
  input: Record<string, unknown>,
) => Promise<unknown>;

/**
 * Owns the agent processes of this node: starts them, feeds their reports into the log in
 * order, and disposes of them. A session's reports are applied one at a time, in the order
 * the agent made them, even though each is its own write.
 */
export class Supervisor {
  private handles = new Map<string, AgentHandle>();
  private starting = new Map<string, Promise<SessionsTable | undefined>>();
  private readonly reports: ReportQueue;
  private readonly hooks: SinkHooks;
  private closing = false;
  /** Where agents run: this node's runtimes, and the environments plugins provide (runners). */
  readonly environments: Environments;
  /** How this node confines agent processes (set by the kernel's start; until then, fail closed). */
  containment: ContainmentState = undecided();
  /** The last `resumeAll`: how many of how many have been tried (`warren status`). */
  resuming = { done: 0, total: 0 };
  invoke: SyscallInvoker = async () => {
    throw new WarrenError('unavailable', 'no syscall table is attached to this kernel');
  };

  constructor(
    private readonly core: Core,
    runtimes: RuntimeRegistry,
    private readonly delivery: Delivery,
    runId: string,
    // Injected by the assembly (auth signs tokens); the kernel only hands them to agents.
    private readonly mintToken: (sessionId: string, gen: number) => string,
    private readonly gateway: ModelGateway,
  ) {
    this.environments = new Environments(runtimes);
    this.reports = new ReportQueue(core);
    this.hooks = {
      runId,
      forget: (id) => {
        this.handles.delete(id);
        this.gateway.upstreams.release(id);
        this.delivery.detach(id);
      },
      finish: (id) => this.finish(id),
      fenced: (id) => {
        this.core.log.warn({ session: id }, 'session owned by another node now: ending its agent here');
        void this.stop(id);
      },
    };
  }

  /** Which tools a session may call: set by the assembly (the syscall table and its gating). */
  toolsOf: (row: SessionsTable) => readonly string[] = () => [];

  has(sessionId: string): boolean {
    return this.handles.has(sessionId);
  }

  /** Agent processes this node runs, and those being started. */
  counts(): { alive: number; starting: number } {
    return { alive: this.handles.size, starting: this.starting.size };
  }

  /** Its agent is being started (or resumed) here right now. */
  isStarting(sessionId: string): boolean {
    return this.starting.has(sessionId);
  }

  /** Settles when a start under way here has finished (at once when none is): never starts one. */
  async started(sessionId: string): Promise<void> {
    await this.starting.get(sessionId)?.catch(() => {});
  }

  runtime(name: string) {
    return this.environments.localRuntime(name);
  }

  /** How a session of this runtime would run here; throws `unavailable` when it must be refused. */
  containmentFor(
    runner: string,
    runtime: string,
    spec: AgentSpec,
    network: NetworkGrant | null,
  ): SessionContainment {
    const rt = this.environments.runtime(runner, runtime);
    return sessionContainment(this.containment, runner, rt, spec, this.networkFor(network));
  }

  private networkFor(granted: NetworkGrant | null): SessionNetwork {
    return { granted, node: this.core.config.containmentNetwork };
  }

  /**
   * Start or resume a session's agent. Failure to start ends the session as crashed. `known`
   * is its row when the caller has it (a spawn, the row it inserted). Resolves to the row as
   * the agent came up, or undefined when it did not start one here.
   */
  start(
    sessionId: string,
    how: 'start' | 'resume',
    known?: SessionsTable,
    /** A resume of a session that was idle: its first idle, if it ran no turn, tells nobody. */
    quiet = false,
  ): Promise<SessionsTable | undefined> {
    const running = this.starting.get(sessionId);
    if (running) return running;
    const p = this.doStart(sessionId, how, known, quiet).finally(() => this.starting.delete(sessionId));
    this.starting.set(sessionId, p);
    return p;
  }

  private async doStart(
    sessionId: string,
    how: 'start' | 'resume',
    known: SessionsTable | undefined,
    quiet: boolean,
  ): Promise<SessionsTable | undefined> {
    if (this.handles.has(sessionId)) return undefined;
    // Read before any await: the trace context is that of the call that asked for the start.
    const traceparent = this.core.traceContext?.();
    const row = known ?? (await sessionById(this.core.store.reader, sessionId));
    if (!row || row.status === 'stopped') return undefined;
    // A session of an environment that is offline (its runner dropped) stays suspended: it
    // is resumed when the environment comes back, not crashed for being unreachable.
    if (how === 'resume' && !this.environments.online(row.runner)) return;
    let sink = this.sinkFor(row, quiet && how === 'resume');
    try {
      const rt = this.environments.runtime(row.runner, row.runtime);
      // Running before the agent starts, so its first reports (idle, output) land after this.
      let gen = row.token_gen ?? 0;
      let elsewhere = false;
      await this.reports.apply(sessionId, async (tx, r) => {
        // Stopped since it was read (or handed in), or another node runs it (or is taking it
        // over): one process per session, cluster-wide.
        if (
          r.status === 'stopped' ||
          !claimable(this.core.node, r) ||
          !(await claim(tx, this.core.node, r))
        ) {
          elsewhere = true;
          return;
        }
        gen = r.token_gen ?? 0;
        if (how === 'resume') {
          // A new token for the new process: whatever still holds the old one (an orphan of a
          // crashed run) can never act as this session again.
          gen += 1;
          await tx.db.updateTable('sessions').set({ token_gen: gen }).where('id', '=', sessionId).execute();
        }
        if (r.status === 'pending' || r.status === 'suspended') {
          await setStatus(tx, this.core, r, 'running', { reason: how === 'resume' ? 'resumed' : 'started' });
        }
      });
      if (elsewhere) return undefined;
      const { spec, secrets } = await this.specOf(row);
      sink = scrubbingSink(sink, secrets);
      const contained = sessionContainment(
        this.containment,
        row.runner,
        rt,
        spec,
        this.networkFor(grantsOfRow(row).network ?? null),
      );
      const endpoint = loopback(this.core.config.publicUrl);
      const confine = agentConfinement(
        this.containment,
        this.core.config,
        sessionId,
        markPrefix(this.core.config.nodeId),
        contained,
        endpoint,
      );
      // Without network, warren is on the sandbox's own loopback, at the same port.
      const url = confine?.endpoint
        ? `http://127.0.0.1:${confine.endpoint.port}`
        : this.core.config.publicUrl;
      const token = this.mintToken(sessionId, gen);
      const ctx: AgentContext = {
        sessionId,
        zone: row.zone,
        depth: row.depth,
        title: row.title,
        spec,
        token,
        gateway: this.gatewayFor(row, spec, gen, token, confine?.endpoint ? url : null),
        url,
        mcpUrl: url ? `${url}/mcp` : null,
        confine,
        ...(traceparent ? { traceparent } : {}),
        tools: this.toolsOf(row),
        run: markPrefix(this.core.config.nodeId),
        deadline: this.core.node.lifelines,
        resumeState:
          how === 'resume' ? parseJson<Record<string, unknown> | null>(row.runtime_state, null) : null,
        resuming: how === 'resume',
        sink,
        call: (name, input) =>
          this.invoke({ kind: 'session', sessionId, zone: row.zone, depth: row.depth }, name, input),
        clock: this.core.clock,
      };
      const handle = await rt.start(ctx);
      // The session may have been killed while its agent was starting.
      const now = await sessionById(this.core.store.reader, sessionId);
      if (!now || now.status === 'stopped' || now.status === 'suspended') {
        await handle.stop();
        this.gateway.upstreams.release(sessionId, gen);
        return now;
      }
      this.handles.set(sessionId, handle);
      // A stop asked while it started found no handle to tell: tell it now.
      if (now.term_deadline !== null) handle.termAsked?.();
      await this.delivery.attach(sessionId, handle);
      return now;
    } catch (error) {
      void sink.exit({ reason: 'crashed', error: `could not start: ${(error as Error).message}` });
      return undefined;
    }
  }

  /**
   * The model gateway for an agent of this node (gateway.enabled, and an HTTP server serving
   * it). A sandbox without network reaches it as it reaches warren (`bridged`: its loopback
   * address). An agent on a remote runner reaches it through the runner's tunnel: the runner
   * builds its own `url`; the server holds the upstream its spawn gave here, now, and the
   * runner's `hold` is nothing (a runner never names the upstream). No key in the spawn: no
   * gateway, its agent reaches its provider as the runner's host lets it.
   */
  private gatewayFor(
    row: SessionsTable,
    spec: AgentSpec,
    gen: number,
    token: string,
    bridged: string | null,
  ): AgentGateway | null {
    const { gateway, gatewayUrl } = this.core.config;
    const base = bridged ?? gatewayUrl;
    if (!gateway.enabled || !base) return null;
    const hold: AgentGateway['hold'] = (provider, upstream) =>
      this.gateway.upstreams.hold(
        row.id,
        gen,
        { zone: row.zone, scope: parseIds(row.budget_scope) },
        provider,
        upstream,
      );
    const url = (provider: GatewayProvider) => `${base}/v1/gateway/${provider}`;
    if (row.runner === LOCAL_ENVIRONMENT) return { url, credential: token, hold };
    const held = runnerUpstream(row.runtime, spec);
    if (!held) return null;
    hold(held.provider, held.upstream);
    return { url, credential: token, hold: () => {} };
  }

  /** Dispose of the agent process, if this node runs one. */
  async stop(sessionId: string): Promise<void> {
    await this.starting.get(sessionId)?.catch(() => {});
    const handle = this.handles.get(sessionId);
    this.handles.delete(sessionId);
    this.gateway.upstreams.release(sessionId);
    this.delivery.detach(sessionId);
    if (handle) await handle.stop().catch(() => {});
  }

  /**
   * Resume many sessions (after a restart) a few at a time, in the background: thousands of
   * agents starting at once would hold the event loop (and the server's answers) for as
   * long as they all take. Stops taking new ones once `stopAll` has begun.
   */
  resumeAll(ids: readonly string[], quiet: ReadonlySet<string> = new Set(), inFlight = 8): Promise<void> {
    let next = 0;
    this.resuming = { done: 0, total: ids.length };
    const progress = this.resuming;
    const worker = async () => {
      while (next < ids.length && !this.closing) {
        const id = ids[next++] as string;
        await this.start(id, 'resume', undefined, quiet.has(id)).catch(() => {});
        progress.done++;
        // On SQLite every query resolves as a microtask: without this, thousands of resumes
        // run as one long turn of the event loop and nothing else (an HTTP request) gets in.
        await new Promise<void>((r) => setImmediate(r));
      }
    };
    return Promise.all(Array.from({ length: Math.min(inFlight, ids.length) }, worker)).then(() => {});
  }

  /** End every agent process this node runs, and keep taking starts (a fenced node's reset). */
  async stopRunning(): Promise<void> {
    await Promise.all([...this.starting.values()].map((p) => p.catch(() => {})));
    await Promise.all([...this.handles.keys()].map((id) => this.stop(id)));
  }

  async stopAll(): Promise<void> {
    this.closing = true;
    // Agents still starting (a resume in flight) are stopped too, once they have a handle.
    await Promise.all([...this.starting.values()].map((p) => p.catch(() => {})));
    await Promise.all([...this.handles.keys()].map((id) => this.stop(id)));
    await this.reports.close();
  }

  /** A stop was asked of the session: its agent may end now rather than at its next safe point. */
  termAsked(sessionId: string): void {
    this.handles.get(sessionId)?.termAsked?.();
  }

  /**
   * A SIGTERMed session went idle: ask its agent to end (it exits 0 and is recorded as
   * terminated). An agent that cannot be asked is stopped here and recorded the same way.
   */
  finish(sessionId: string): void {
    const handle = this.handles.get(sessionId);
    if (handle?.finish) {
      handle.finish();
      return;
    }
    void this.stop(sessionId)
      .then(() =>
        this.reports.apply(sessionId, async (tx, r) => {
          if (r.status !== 'stopped' && r.term_deadline !== null) {
            const end = endAfterTerm(r);
            await endSession(tx, this.core, sessionId, end.reason, sessionId, {
              after: 'SIGTERM',
              ...end.detail,
            });
          }
        }),
      )
      .catch(() => {}); // the queue has logged it
  }

  /**
   * The spawn's spec with its secret references opened into the environment: the only place
   * secret values exist outside the store, and only in the agent's environment.
   */
  private async specOf(row: SessionsTable): Promise<{ spec: AgentSpec; secrets: Map<string, string> }> {
    const { secretEnv, ...spec } = parseJson<AgentSpec & { secretEnv?: Record<string, string> }>(row.spec, {
      prompt: null,
      config: {},
      cwd: null,
      model: null,
      env: {},
    });
    const { env, values } = await resolveSecretEnv(this.core, row.zone, secretEnv);
    return { spec: { ...spec, env: { ...spec.env, ...env } }, secrets: values };
  }

  private sinkFor(row: SessionsTable, unchanged: boolean): AgentSink {
    return agentSink(this.core, this.reports, this.delivery, this.hooks, row, unchanged);
  }
}
