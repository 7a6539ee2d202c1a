import { randomBytes } from 'node:crypto';
import { sweepRunDir } from '../runtimes/rundir.ts';
import type { RuntimeRegistry } from '../runtimes/types.ts';
import type { LogEvent } from '../store/events.ts';
import type { DeliveryMode, Permission, SessionsTable } from '../store/schema.ts';
import type { Store } from '../store/store.ts';
import { unitTx, type WriteUnit } from '../store/writer.ts';
import { type Clock, systemClock } from '../util/clock.ts';
import { createIds, type IdGenerator } from '../util/ids.ts';
import { type Log, stderrLog } from '../util/log.ts';
import { forbidden } from '../vocab/errors.ts';
import { DEFAULT_ZONE, type Principal, principalId } from '../vocab/principal.ts';
import { readableSession } from './access.ts';
import { endOrphans, recover } from './boot.ts';
import { WallTimers } from './breach.ts';
import { defaultKernelConfig, type KernelConfig } from './config.ts';
import { type ContainmentState, resolveContainment } from './containment.ts';
import type { KernelContext } from './context.ts';
import { Delivery } from './delivery.ts';
import { environmentSessions, suspendedSessions } from './environment-sessions.ts';
import type { EnvironmentProvider } from './environments.ts';
import { FdTable } from './fdtable.ts';
import * as file from './file.ts';
import { type FollowFilter, type FollowOptions, follow } from './follow.ts';
import { ModelGateway } from './gateway/gateway.ts';
import { CommitWatch, countSessions, type KernelHealth, kernelHealth } from './health.ts';
import { withInputText } from './input-record.ts';
import * as listing from './listing.ts';
import { sessionById } from './lookup.ts';
import { type NodeRole, soloNode } from './node.ts';
import type { KernelObserver } from './observer.ts';
import { createOperatorKey, listOperatorKeys, revokeOperatorKey } from './operator-keys.ts';
import {
  checkPersona,
  deletePersona,
  getPersona,
  listPersonas,
  type PersonaInput,
  personaNames,
  putPersona,
} from './personas.ts';
import * as proc from './proc.ts';
import { openSession, reanimate } from './reanimate.ts';
import { type PhaseScope, Reconciler } from './reconcile.ts';
import type { FdInfo, SessionInfo } from './records.ts';
import { deleteSession } from './retire.ts';
import { type SessionRoom, streamNamesById, unheldRooms } from './room-state.ts';
import * as rooms from './rooms.ts';
import { deleteSecret, listSecrets, SecretBox, setSecret } from './secrets.ts';
import { sessionCwd, stoppedAmong } from './session-reads.ts';
import {
  type LiveSession,
  liveSessions,
  type SessionState,
  sessionState,
  sessionStates,
} from './session-state.ts';
import { type SignalName, sendSignal } from './signals.ts';
import { checkSpawn, type SpawnResult } from './spawn.ts';
import { markPrefix, Supervisor, type SyscallInvoker } from './supervisor.ts';
import { syncResult } from './sync-spawn.ts';
import { endQuietly, type StopOutcome, TermTimers, termOrKill } from './term.ts';
import type { SpawnRequest, ToolPolicy } from './types.ts';
import * as views from './views.ts';
import { hasUntakenInput, waitChild } from './wait.ts';
import { ensureZone, isInit, setZoneLimits, type ZoneLimitsPatch } from './zones.ts';

export type { ReadResult, StreamListing } from './file.ts';

export interface KernelOptions {
  store: Store;
  runtimes: RuntimeRegistry;
  config?: Partial<KernelConfig>;
  clock?: Clock;
  ids?: IdGenerator;
  /** Gives each new session its tools; by default sessions are not restricted by the kernel. */
  toolPolicy?: ToolPolicy;
  /** The tools a session may call, as its agent is told. */
  toolsOf?: (row: SessionsTable) => readonly string[];
  /**
   * Mints the token an agent acts with, for its session and the row's `token_gen` (the
   * signing secret stays with the assembly, which injects this).
   */
  mintToken: (sessionId: string, gen: number) => string;
  /** The key named secrets are sealed with (secrets-key.ts); by default one that dies with this kernel. */
  secretsKey?: Uint8Array;
  /** Where diagnostics go; default: errors on stderr. */
  log?: Log;
  /** The current call's W3C trace context, when tracing is on (agents get it as TRACEPARENT). */
  traceContext?: () => string | undefined;
  /**
   * How agents are confined, being decided (`resolveContainment` of `config.containment`),
   * when the assembly started it early so the probe runs while the store opens; by default
   * the kernel starts it itself. Awaited by `start`.
   */
  containment?: Promise<ContainmentState>;
}

/**
 * A kernel: the mechanism (sessions, streams, fds, delivery, signals, supervision,
 * reconciliation) over one store. Built from options; nothing about it is global, so two
 * kernels can live in one process. This object only assembles the parts and names the
 * operations; each concept lives in its own file (proc, file, rooms, views, wait, term).
 */
export class Kernel {
  private readonly store: Store;
  readonly config: KernelConfig;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  private readonly k: KernelContext;
  /** This run of the kernel: recorded with every agent process it starts. */
  readonly runId: string;
  private readonly reconciler: Reconciler;
  private unsubscribe: (() => void) | undefined;
  private started = false;
  private unremote: (() => void) | undefined;
  /** The model gateway's watch of this node's commits (a stopped session's credential dies). */
  private unlocal: (() => void) | undefined;
  /** Sessions that were live when the kernel last stopped, until resumed. */
  private lost: string[] = [];
  /** Of those, the ones that were idle: their resume changes nothing their parents must hear. */
  private lostIdle = new Set<string>();
  private readonly commits: CommitWatch;
  /** When `start` ran (the kernel's clock). */
  private startedAt = 0;
  private unwatch: (() => void) | undefined;
  private readonly runtimes: RuntimeRegistry;
  /** The bubblewrap probe in flight (a child process), awaited by `start`. */
  private readonly containmentDecided: Promise<ContainmentState>;

  constructor(opts: KernelOptions) {
    this.store = opts.store;
    this.runtimes = opts.runtimes;
    this.config = { ...defaultKernelConfig(), ...opts.config };
    this.clock = opts.clock ?? systemClock;
    this.ids = opts.ids ?? createIds(this.clock);
    const k = {
      store: this.store,
      clock: this.clock,
      ids: this.ids,
      config: this.config,
      fdTable: new FdTable(this.store, this.clock, this.config.cursorFlushMs, opts.log),
      effects: {
        startAgent: (id, how, row) => void k.supervisor.start(id, how, row),
        stopAgent: (id) => void k.supervisor.stop(id),
        armTermDeadline: (id, at) => k.term.arm(id, at),
        termAgent: (id) => k.supervisor.termAsked(id),
        armBudgetDeadline: (id, at) => k.wall.arm(id, at),
        // One still starting counts: it may be at work already (a script's first step), so a
        // budget it breaches meanwhile asks it to stop rather than ending it unasked.
        hasAgent: (id) => k.supervisor.has(id) || k.supervisor.isStarting(id),
        finishAgent: (id) => k.supervisor.finish(id),
      },
      toolPolicy: opts.toolPolicy ?? (() => null),
      secretBox: new SecretBox(opts.secretsKey ?? randomBytes(32)),
      log: opts.log ?? stderrLog,
      observers: [] as KernelObserver[],
      node: soloNode(this.config.nodeId, this.clock),
      ...(opts.traceContext ? { traceContext: opts.traceContext } : {}),
    } as KernelContext;
    this.commits = new CommitWatch(() => this.clock.now());
    k.term = new TermTimers(k);
    k.wall = new WallTimers(k);
    k.delivery = new Delivery(k);
    k.gateway = new ModelGateway(k);
    // Cursor flushes are conditioned on this node's ownership of the fds' sessions (cursors.ts).
    k.fdTable.owner = () => (!k.node.clustered ? null : k.node.epoch === 0 ? undefined : { node: k.node.id });
    this.runId = `${this.config.nodeId}.${this.ids.secret(8)}`;
    k.supervisor = new Supervisor(k, opts.runtimes, k.delivery, this.runId, opts.mintToken, k.gateway);
    this.containmentDecided = opts.containment ?? resolveContainment(this.config.containment);
    // `start` reports a failed decision; until then it must not count as unhandled.
    this.containmentDecided.catch(() => {});
    if (opts.toolsOf) k.supervisor.toolsOf = opts.toolsOf;
    this.k = k;
    this.reconciler = new Reconciler(k, {
      escalate: (id) => k.term.escalate(id),
      isRunningHere: (id) => k.supervisor.has(id),
      isStarting: (id) => k.supervisor.isStarting(id),
    });
  }

  /** Wire the syscall table in, so in-process agents (script) can call it. */
  setInvoker(invoke: SyscallInvoker): void {
    this.k.supervisor.invoke = invoke;
  }

  /**
   * Bring the kernel up: zones, the fd index, sessions that were live before a restart.
   * Those are resumed here unless `deferResume` (a server resumes them once it listens,
   * so agents get a reachable endpoint).
   */
  async start(opts: { deferResume?: boolean } = {}): Promise<void> {
    if (this.started) return;
    this.started = true;
    // Decided once, before anything here can start an agent: `bwrap` without bubblewrap fails.
    try {
      this.k.supervisor.containment = await this.containmentDecided;
    } catch (error) {
      this.started = false;
      throw error;
    }
    if (this.k.supervisor.containment.inForce === 'unavailable') {
      this.k.log.warn(
        { containment: this.config.containment, reason: this.k.supervisor.containment.reason },
        'no confinement for agents: agents that can run shell commands will be refused (set containment: none to run them unconfined)',
      );
    }
    this.startedAt = this.clock.now();
    this.unwatch = this.store.writer.onBatch(this.commits.observe);
    await this.store.writer.write(async (tx) => ensureZone(tx, DEFAULT_ZONE));
    await this.k.fdTable.load();
    this.unsubscribe = this.store.writer.onAnyCommit((events) => {
      this.k.fdTable.apply(events);
      this.k.delivery.onCommit(events);
    });
    this.unremote = this.store.writer.onRemoteCommit((events) => {
      this.k.gateway.onCommit(events);
      this.remoteEffects(events);
    });
    this.unlocal = this.store.writer.onCommit(this.k.gateway.onCommit);
    await endOrphans(this.k, this.runId);
    const recovered = await recover(this.k);
    this.lost = recovered.ids;
    this.lostIdle = recovered.idle;
    await this.k.wall.armAll();
    if (!opts.deferResume) this.resumeLost();
    this.reconciler.start();
  }

  /** Resume the sessions a restart suspended (when `resumeOnStart`). */
  resumeLost(): void {
    const lost = this.lost.splice(0);
    const idle = this.lostIdle;
    this.lostIdle = new Set();
    if (this.config.resumeOnStart) void this.k.supervisor.resumeAll(lost, idle);
  }

  /** Stop agents (their sessions stay resumable), persist cursors, stop the loop. */
  async shutdown(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.reconciler.stop();
    this.k.term.clearAll();
    this.k.wall.clearAll();
    await this.k.supervisor.stopAll();
    // Their agents are gone: what runtimes hold for them (the script runtime's worker) goes too.
    await Promise.all([...this.runtimes.values()].map((r) => r.close?.()));
    // Each agent removed its own private dir when it ended; their run root goes too, else
    // every clean run leaves an empty `warren-run-*` behind (a crash's is swept at the next boot).
    sweepRunDir(markPrefix(this.config.nodeId));
    await this.k.fdTable.flush();
    await this.store.writer.drained();
    this.unsubscribe?.();
    this.unremote?.();
    this.unlocal?.();
    this.unwatch?.();
  }

  /** This node among those sharing the database (src/cluster/ sets its epoch and lock). */
  get node(): NodeRole {
    return this.k.node;
  }

  /**
   * What another node committed that concerns an agent running here: its session was stopped
   * or suspended over there (kill, SIGSTOP, a takeover), so the process goes; or a lost
   * node's session was handed to this one, so it starts here. Locally the writer's
   * after-commit effects do both.
   */
  private remoteEffects(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.type === 'session.status' && e.session_id) {
        const to = e.payload.to;
        if ((to === 'stopped' || to === 'suspended') && this.k.supervisor.has(e.session_id))
          void this.k.supervisor.stop(e.session_id);
      } else if (e.type === 'node.lost') {
        const moved = (e.payload.moved ?? {}) as Record<string, string>;
        this.adopt(Object.keys(moved).filter((id) => moved[id] === this.k.node.id));
      }
    }
  }

  /** Resume sessions handed to this node (a lost node's), a few at a time. */
  adopt(ids: readonly string[]): void {
    if (ids.length > 0 && this.started) void this.k.supervisor.resumeAll(ids);
  }

  /** Whether this node runs (or is starting) the session's agent. */
  runsHere = (id: string): boolean => this.k.supervisor.has(id) || this.k.supervisor.isStarting(id);

  /** Fenced (this node lost its lease): end every agent process it runs, write nothing for them. */
  stopAgents = (): Promise<void> => this.k.supervisor.stopRunning();

  /** Watch the hot paths (delivery, reconcile phases): metrics. Returns how to stop. */
  observe(observer: KernelObserver): () => void {
    this.k.observers.push(observer);
    return () => {
      const i = this.k.observers.indexOf(observer);
      if (i >= 0) this.k.observers.splice(i, 1);
    };
  }

  /** The kernel's own health (`warren status`): store, commits, delivery backlog, reconcile loop, agents. */
  health(): Promise<KernelHealth> {
    return kernelHealth(
      this.k,
      this.commits,
      this.reconciler.lastTick,
      this.startedAt,
      this.reconciler.phases,
    );
  }

  /** Live sessions by zone, status and runtime (one grouped query). */
  countSessions = () => countSessions(this.k);

  /** This node's agent processes: running, and being started. */
  agentCounts = () => this.k.supervisor.counts();

  /** The model gateway's kernel half: callers, budgets before the call, metering (docs/gateway.md). */
  get gateway(): ModelGateway {
    return this.k.gateway;
  }

  /** How this node confines agent processes. */
  get containment() {
    return this.k.supervisor.containment;
  }

  /**
   * A plugin's reconcile phase: runs after the kernel's own, each tick, errors isolated.
   * `scope: 'cluster'` runs it on one node at a time when several share the database (a
   * PostgreSQL try-lock); `node` (the default) on every node.
   */
  addReconcilePhase(phase: { name: string; run(): Promise<void>; scope?: PhaseScope; seed?: string }): void {
    this.reconciler.phases.push({ scope: 'node', ...phase });
  }

  /**
   * A plugin that runs agents elsewhere (remote runners) serves the environments `<kind>:<name>`:
   * spawns naming one start their agents through it (environments.ts).
   */
  provideEnvironments(kind: string, provider: EnvironmentProvider): void {
    this.k.supervisor.environments.provide(kind, provider);
  }

  /** Whether agents can be started in `environment` now (`local` always can). */
  environmentOnline(environment: string): boolean {
    return this.k.supervisor.environments.online(environment);
  }

  /** The environments besides `local` agents can be started in here now (connected runners). */
  onlineEnvironments(): string[] {
    return this.k.supervisor.environments.onlineEnvironments();
  }

  /** A typed `not_found` unless `environment` exists (offline is fine: a task waits for it). */
  checkEnvironment(environment: string): void {
    this.k.supervisor.environments.check(environment);
  }

  /** Run one reconciliation tick now (tests, operators). */
  reconcile(): Promise<void> {
    return this.reconciler.tick();
  }

  // ---------------------------------------------------------------- processes (proc.ts, wait.ts)

  spawn = (p: Principal, req: SpawnRequest, opts: proc.SpawnOptions = {}) => proc.spawn(this.k, p, req, opts);
  session = (p: Principal, id: string): Promise<SessionInfo> => proc.session(this.k, p, id);
  /**
   * The one read scope of a session (session_show's): resolves when `p` may read session
   * `id`, else `forbidden` (in its zone) or `not_found`. Every syscall that returns a
   * session's data checks it, so none reads more than session_show would.
   */
  requireReadable = async (p: Principal, id: string): Promise<void> => {
    await readableSession(this.k.store.reader, p, id);
  };
  ps = (p: Principal, opts: { all?: boolean; after?: string; limit: number }) => proc.ps(this.k, p, opts);
  kill = (p: Principal, id: string, opts: { graceful?: boolean } = {}) => proc.kill(this.k, p, id, opts);
  terminate = (p: Principal, fd: number) => proc.terminate(this.k, p, fd);
  send = (p: Principal, id: string, text: string) => proc.send(this.k, p, id, text);
  /** `send` inside a plugin's transaction: its state change and the input commit together. */
  sendIn = (unit: WriteUnit, p: Principal, id: string, text: string) =>
    proc.sendIn(unitTx(unit), this.k, p, id, text);
  stopOrContinue = (p: Principal, id: string, signal: 'SIGSTOP' | 'SIGCONT') =>
    proc.stopOrContinue(this.k, p, id, signal);
  resume = (p: Principal, id: string) => proc.resume(this.k, p, id);
  open = (p: Principal, id: string, pipe: DeliveryMode | null = null) => openSession(this.k, p, id, pipe);
  deleteSession = (p: Principal, id: string) => deleteSession(this.k, p, id);

  // ---------------------------------------------------------------- operator keys (operator-keys.ts)

  /** A new operator key for `name`: the key itself is in this answer only. */
  operatorKeyCreate = (by: Principal, name: string) =>
    createOperatorKey(this.store, this.ids, name, principalId(by));
  /** Every operator key (never the keys themselves). */
  operatorKeyList = () => listOperatorKeys(this.store);
  /** Revoke an operator key (the last live one is kept). */
  operatorKeyRevoke = (by: Principal, id: string) => revokeOperatorKey(this.store, id, principalId(by));

  /** Every zone's id (a server opens a socket per zone). */
  zoneIds = async (): Promise<string[]> =>
    (await this.store.reader.selectFrom('zones').select('id').execute()).map((z) => z.id);
  /** The log's last committed seq. */
  logHead = (): Promise<number> => this.store.log.head();

  /** Set (and read back) the limits of the caller's zone. */
  setZoneLimits = async (p: Principal, patch: ZoneLimitsPatch) => {
    if (p.kind !== 'operator') throw forbidden('zone limits are set by operators');
    const limits = await this.store.writer.write((tx) =>
      setZoneLimits(tx, p.zone, patch, this.config.limits, principalId(p)),
    );
    return { zone: p.zone, limits };
  };
  waitChild = (
    p: Principal,
    ref: { fd?: number; session?: string },
    opts: { waitMs?: number; signal?: AbortSignal } = {},
  ) => waitChild(this.k, p, ref, opts);
  /** A sync spawn's answer: the child's result once it is done, within syncSpawnWaitMs (sync-spawn.ts). */
  syncResult = (
    p: Principal,
    fds: { pipeFd: number; lifecycleFd: number },
    opts: { waitMs?: number; signal?: AbortSignal } = {},
  ) => syncResult(this.k, p, fds, opts);

  /**
   * Whether input written to a session (on its async fds) has not yet been taken by a
   * finished turn: an idle session with input due is about to run again, not done.
   */
  hasPendingInput = async (id: string): Promise<boolean> =>
    hasUntakenInput(this.k, id, await this.store.log.head());

  // ---------------------------------------------------------------- inside a caller's write unit

  /**
   * Signal a session in the caller's transaction, so the signal commits with the change
   * that caused it (a plugin's reparented task and its `[ADOPTED]`). A target without a
   * stdin (init) gets the log event only.
   */
  signalIn = (
    unit: WriteUnit,
    target: { zone: string; id: string },
    signal: SignalName,
    fields: Record<string, unknown>,
    actor: string,
  ) => sendSignal(unitTx(unit), target.zone, target.id, signal, fields, actor);

  /**
   * Stop a session in the caller's transaction: SIGTERM when `graceful` and its agent can be
   * asked (SIGKILL after the grace period), else SIGKILL. Null when it had already stopped.
   * `quiet`: its work is done, so its agent ends at its next safe point without being told
   * (no `[SIGTERM]` input, no model turn); `reason` says why in the log.
   */
  stopIn = async (
    unit: WriteUnit,
    id: string,
    actor: string,
    graceful: boolean,
    opts: { quiet?: boolean; reason?: string } = {},
  ): Promise<StopOutcome | null> => {
    const tx = unitTx(unit);
    const row = await sessionById(tx.db, id);
    if (!row || row.status === 'stopped' || isInit(id)) return null;
    // Already asked: a second SIGTERM would only push its deadline back.
    if (graceful && row.term_deadline !== null) return { signal: 'SIGTERM', deadline: row.term_deadline };
    if (graceful && opts.quiet) return endQuietly(tx, this.k, row, actor, opts.reason ?? 'its work is done');
    return termOrKill(tx, this.k, row, actor, graceful);
  };

  /**
   * Bring a cleanly stopped session back (reanimate.ts) in the caller's transaction, so input
   * written in the same unit reaches it (an operator's answer to its escalation). False when
   * it cannot come back (it crashed, was killed, or its runtime saved no resume state).
   */
  reviveIn = async (unit: WriteUnit, id: string, actor: string, why: string): Promise<boolean> => {
    const tx = unitTx(unit);
    const row = await sessionById(tx.db, id);
    // Live ones need no reviving: input reaches them (a suspended one is woken by it).
    if (row === undefined || row.status !== 'stopped') return false;
    return reanimate(tx, this.k, row, actor, why);
  };

  // ---------------------------------------------------------------- files (file.ts)

  write = (p: Principal, fd: number, text: string, data?: unknown) => file.write(this.k, p, fd, text, data);
  read = (p: Principal, fd: number, opts: Parameters<typeof file.read>[3] = {}) =>
    file.read(this.k, p, fd, opts);
  close = (p: Principal, fd: number, opts: { force?: boolean } = {}) => file.close(this.k, p, fd, opts);
  listFds = (p: Principal, holder?: string, page: file.PageOptions = {}): Promise<FdInfo[]> =>
    file.listFds(this.k, p, holder, page);
  createStream = (p: Principal, name: string, selfEcho = false) =>
    file.createStream(this.k, p, name, selfEcho);
  attach = (p: Principal, fd: number, target: string, permission: Permission, mode: DeliveryMode) =>
    file.attach(this.k, p, fd, target, permission, mode);
  share = (
    p: Principal,
    ref: { fd?: number; streamName?: string },
    permission?: Permission,
    mode?: DeliveryMode,
  ) => file.share(this.k, p, ref, permission, mode);
  listStreams = (p: Principal, opts: { internal?: boolean } & file.PageOptions = {}) =>
    file.listStreams(this.k, p, opts);
  /** Sessions the caller may read (its zone, or itself and its descendants), paged by id or prefix. */
  listSessions = (p: Principal, opts: Parameters<typeof listing.listSessions>[2] = {}) =>
    listing.listSessions(this.k, p, opts);
  /** Names of the open streams the caller may list, by prefix (completion). */
  streamNames = (p: Principal, opts: { prefix?: string; limit?: number } = {}) =>
    listing.streamNames(this.k, p, opts);

  // ---------------------------------------------------------------- operator rooms (rooms.ts)

  roomCreate = (p: Principal, name: string, selfEcho = false) => rooms.roomCreate(this.k, p, name, selfEcho);
  /** An open room of the caller's zone by id or name: what a plugin keeps an attachment to. */
  room = (p: Principal, stream: string) => rooms.room(this.k, p, stream);
  roomAttach = (
    p: Principal,
    session: string,
    stream: string,
    permission?: Permission,
    mode?: DeliveryMode,
  ) => rooms.roomAttach(this.k, p, session, stream, permission, mode);
  roomJoin = (p: Principal, stream: string) => rooms.roomJoin(this.k, p, stream);
  roomDetach = (p: Principal, session: string, stream: string) =>
    rooms.roomDetach(this.k, p, session, stream);
  attachments = (p: Principal, session: string) => rooms.attachments(this.k, p, session);
  roomClose = (p: Principal, stream: string, opts: { force?: boolean } = {}) =>
    rooms.roomClose(this.k, p, stream, opts);

  // ---------------------------------------------------------------- named secrets (secrets.ts)

  /** Operators only: a session never sets, lists or reads a secret; it passes on names. */
  secretSet = (p: Principal, name: string, value: string) =>
    this.store.writer.write((tx) => setSecret(tx, this.k, operatorZone(p), name, value, principalId(p)));
  secretList = (p: Principal) => listSecrets(this.store.reader, operatorZone(p));
  secretDelete = (p: Principal, name: string) =>
    this.store.writer.write((tx) => deleteSecret(tx, operatorZone(p), name, principalId(p)));

  // ---------------------------------------------------------------- personas (personas.ts)

  /** Operators create (or with `replace` replace) a persona; its runtime must be one this kernel has. */
  personaCreate = (p: Principal, input: PersonaInput, replace = false) => {
    const zone = operatorOnly(p, 'personas are kept by operators');
    checkPersona(input, (runtime) => this.k.supervisor.runtime(runtime));
    if (input.environmentId !== undefined) this.checkEnvironment(input.environmentId);
    return this.store.writer.write((tx) => putPersona(tx, zone, input, principalId(p), replace));
  };
  /** Operators and sessions read their zone's personas (an orchestrator picks one for a child). */
  personaList = (p: Principal) => listPersonas(this.store.reader, p.zone);
  personaShow = (p: Principal, name: string) => getPersona(this.store.reader, p.zone, name);
  /** Names of the caller's zone's personas starting with `prefix` (completion). */
  personaNames = (p: Principal, prefix: string, limit: number) =>
    personaNames(this.store.reader, p.zone, prefix, limit);
  /** Sessions spawned from it keep the configuration they were spawned with. */
  personaDelete = (p: Principal, name: string) => {
    const zone = operatorOnly(p, 'personas are kept by operators');
    return this.store.writer.write((tx) => deletePersona(tx, zone, name, principalId(p)));
  };

  // ---------------------------------------------------------------- the log (views.ts)

  sessionEvents = (p: Principal, id: string, opts: { from?: number; limit?: number }): Promise<LogEvent[]> =>
    views.sessionEvents(this.k, p, id, opts);
  events = (p: Principal, q: views.EventsQuery) => views.events(this.k, p, q);
  /** The caller's own log (an operator's zone, a session's own events), oldest first after a seq. */
  ownLog = (p: Principal, opts: { after?: number; limit?: number } = {}) => views.ownLog(this.k, p, opts);
  transcript = (p: Principal, stream: string, opts: { before?: number; limit?: number }) =>
    views.transcript(this.k, p, stream, opts);
  /** The log from `after` on, then live: what the live event stream frames. */
  follow = (p: Principal, filter: FollowFilter, after: number | undefined, opts: FollowOptions = {}) =>
    follow(this.store, p, filter, after, opts);

  // ---------------------------------------------------------------- for plugins

  /**
   * `spawn` whose unit runs in a plugin's own writer (its `tables.write`): `also` gets that
   * unit once the session is there, so the plugin's rows change with the spawn, or neither.
   */
  spawnWith = <U extends WriteUnit>(
    tables: { write<R>(fn: (unit: U) => Promise<R>): Promise<R> },
    p: Principal,
    req: SpawnRequest,
    also: (unit: U, r: SpawnResult) => Promise<void>,
  ) =>
    proc.spawn(this.k, p, req, {
      writer: (fn) =>
        tables.write(async (unit) => {
          const r = await fn(unitTx(unit));
          await also(unit, r);
          return r;
        }),
    });

  /** The sessions of `environment` (any zone) that have not stopped, oldest first. */
  environmentSessions = (environment: string, limit = 500) => environmentSessions(this.k, environment, limit);

  /** The suspended sessions of `environment` (any zone), each with its suspend reason. */
  suspendedSessions = (environment: string, limit = 1000) => suspendedSessions(this.k, environment, limit);

  // ---------------------------------------------------------------- narrow reads for plugins (session-reads.ts)

  /** Which of `ids` name sessions that have stopped (ids of no session are left out). */
  stoppedAmong = (ids: readonly string[]): Promise<string[]> => stoppedAmong(this.store.reader, ids);

  /** The working directory a session was spawned with; null: none given, or no such session. */
  sessionCwd = (id: string): Promise<string | null> => sessionCwd(this.store.reader, id);

  // ---------------------------------------------------------------- what plugins read of the kernel's tables

  /**
   * Events of one type after `after`, oldest first, in every zone (the log's type index): a
   * plugin's backstop catching up on what it follows since it last looked.
   */
  eventsOfType = async (type: string, after: number, limit: number): Promise<LogEvent[]> =>
    withInputText(this.store.reader, await this.store.log.events({ type, after, limit }));

  /** Where one session stands (session-state.ts), read from committed rows; undefined when there is none. */
  sessionState = (id: string): Promise<SessionState | undefined> => sessionState(this.store.reader, id);

  /** `sessionState` in the caller's write unit: it sees the unit's own writes. */
  sessionStateIn = (unit: WriteUnit, id: string): Promise<SessionState | undefined> =>
    sessionState(unitTx(unit).db, id);

  /** The states of the sessions of `ids` that exist. */
  sessionStates = (ids: readonly string[]): Promise<SessionState[]> => sessionStates(this.store.reader, ids);

  /** Every live session of every zone, without its text: a backstop's scan of the live set. */
  liveSessions = (): Promise<LiveSession[]> => liveSessions(this.store.reader);

  /**
   * Of (session, room) pairs, those whose session is live and room open but which the session
   * holds no open fd on: the durable attachments a plugin still has to make (room-state.ts).
   */
  unheldRooms = (pairs: readonly SessionRoom[]): Promise<SessionRoom[]> =>
    unheldRooms(this.store.reader, pairs);

  /** The names of streams by id (open or closed); ids of no stream are left out. */
  streamNamesById = (ids: readonly string[]): Promise<Map<string, string>> =>
    streamNamesById(this.store.reader, ids);

  // ---------------------------------------------------------------- spawn inside a caller's write unit

  /**
   * Spawn in the caller's write unit (a plugin's `tx`): the same checks and the same spawn as
   * `spawn`, so the caller's own rows (a task's move to running) and the session commit
   * together, or neither does. The agent starts once the unit commits (`started`).
   */
  spawnIn = (unit: WriteUnit, p: Principal, req: SpawnRequest): Promise<proc.SpawnedIn> =>
    proc.spawnIn(unitTx(unit), this.k, p, req);

  /**
   * Whether a spawn by `p` would be refused (persona, runtime — without one, `p`'s own —
   * grants, the runtime's check of the spec), writing nothing: a typed error if so.
   */
  checkSpawn = (p: Principal, req: SpawnRequest): Promise<void> => checkSpawn(this.k, p, req);
}

function operatorOnly(p: Principal, why: string): string {
  if (p.kind !== 'operator') throw forbidden(why);
  return p.zone;
}

function operatorZone(p: Principal): string {
  if (p.kind !== 'operator') throw forbidden('secrets are kept by operators');
  return p.zone;
}
