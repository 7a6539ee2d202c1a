import type { RuntimeRegistry } from '../runtimes/types.ts';
import type { LogEvent } from '../store/events.ts';
import type { EventQuery } from '../store/log.ts';
import type { DeliveryMode, FdsTable, Permission, SessionsTable, StreamsTable } from '../store/schema.ts';
import type { Store } from '../store/store.ts';
import type { WriteTx } from '../store/writer.ts';
import { type Clock, systemClock, type TimerHandle } from '../util/clock.ts';
import { createIds, type IdGenerator } from '../util/ids.ts';
import { defaultKernelConfig, type KernelConfig } from './config.ts';
import type { Core, Effects } from './core.ts';
import { Delivery, toMessageView } from './delivery.ts';
import { forbidden, invalid, notFound, WarrenError } from './errors.ts';
import { FdTable } from './fdtable.ts';
import {
  closeFdsCascade,
  endSession,
  ensureZone,
  initIdOf,
  isInit,
  requestTerm,
  setStatus,
  tearDownStream,
} from './lifecycle.ts';
import { fdRow, liveSessionRow, openFdsOfOn, openStreamByRef, sessionRow } from './lookup.ts';
import { DEFAULT_ZONE, KERNEL_ACTOR, type Principal, principalId } from './principal.ts';
import { Reconciler } from './reconcile.ts';
import {
  canRead,
  canWrite,
  type FdInfo,
  isReservedName,
  type MessageView,
  permWithin,
  type SessionInfo,
  type StreamInfo,
  sessionInfo,
  streamInfo,
} from './records.ts';
import { logSignal, sendSignal } from './signals.ts';
import { type SpawnRequest, spawnInTx, type ToolPolicy } from './spawn.ts';
import { createStream, openFd, postMessage, undelivered } from './streams.ts';
import { Supervisor, type SyscallInvoker } from './supervisor.ts';

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
   * signing secret stays with the assembly). By default, a key that dies with this kernel.
   */
  mintToken?: (sessionId: string, gen: number) => string;
}

export interface StreamListing extends StreamInfo {
  subscribers: FdInfo[];
  bufferDepth: number;
}

export interface ReadResult {
  messages: MessageView[];
  cursor: number;
  /** True when a bounded wait ran out with nothing: call again to keep waiting. */
  timedOut: boolean;
}

/**
 * A kernel: the mechanism (sessions, streams, fds, delivery, signals, supervision,
 * reconciliation) over one store. Built from options; nothing about it is global, so
 * two kernels can live in one process.
 */
export class Kernel {
  readonly store: Store;
  readonly config: KernelConfig;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  private readonly core: Core;
  private readonly fdTable: FdTable;
  private readonly delivery: Delivery;
  private readonly supervisor: Supervisor;
  private readonly reconciler: Reconciler;
  private readonly termTimers = new Map<string, TimerHandle>();
  private unsubscribe: (() => void) | undefined;
  private started = false;
  /** Sessions that were live when the kernel last stopped, until resumed. */
  private lost: string[] = [];

  constructor(opts: KernelOptions) {
    this.store = opts.store;
    this.config = { ...defaultKernelConfig(), ...opts.config };
    this.clock = opts.clock ?? systemClock;
    this.ids = opts.ids ?? createIds(this.clock);
    this.fdTable = new FdTable(this.store, this.clock, this.config.cursorFlushMs);
    const effects: Effects = {
      startAgent: (id, how) => void this.supervisor.start(id, how),
      stopAgent: (id) => void this.supervisor.stop(id),
      armTermDeadline: (id, at) => this.armTermDeadline(id, at),
    };
    this.core = {
      store: this.store,
      clock: this.clock,
      ids: this.ids,
      config: this.config,
      fdTable: this.fdTable,
      effects,
      toolPolicy: opts.toolPolicy ?? (() => null),
    };
    this.delivery = new Delivery(this.core);
    this.supervisor = new Supervisor(this.core, opts.runtimes, this.delivery, opts.mintToken);
    if (opts.toolsOf) this.supervisor.toolsOf = opts.toolsOf;
    this.reconciler = new Reconciler(this.core, {
      escalate: (id) => this.escalate(id),
      isRunningHere: (id) => this.supervisor.has(id),
    });
  }

  /** Wire the syscall table in, so in-process agents (script) can call it. */
  setInvoker(invoke: SyscallInvoker): void {
    this.supervisor.invoke = invoke;
  }

  /**
   * Bring the kernel up: zones, the fd index, sessions that were live before a restart.
   * Those are resumed here unless `deferResume` (a server resumes them once it listens,
   * so agents get a reachable endpoint).
   */
  async start(opts: { deferResume?: boolean } = {}): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.store.writer.write(async (tx) => ensureZone(tx, DEFAULT_ZONE));
    await this.fdTable.load();
    this.unsubscribe = this.store.writer.onCommit((events) => {
      this.fdTable.apply(events);
      this.delivery.onCommit(events);
    });
    await this.recover();
    if (!opts.deferResume) this.resumeLost();
    this.reconciler.start();
  }

  /** Resume the sessions a restart suspended (when `resumeOnStart`). */
  resumeLost(): void {
    const lost = this.lost.splice(0);
    if (this.config.resumeOnStart) for (const id of lost) void this.supervisor.start(id, 'resume');
  }

  /** Stop agents (their sessions stay resumable), persist cursors, stop the loop. */
  async shutdown(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.reconciler.stop();
    for (const t of this.termTimers.values()) this.clock.clearTimeout(t);
    this.termTimers.clear();
    await this.supervisor.stopAll();
    await this.fdTable.flush();
    await this.store.writer.drained();
    this.unsubscribe?.();
  }

  /** Run one reconciliation tick now (tests, operators). */
  reconcile(): Promise<void> {
    return this.reconciler.tick();
  }

  // ---------------------------------------------------------------- sessions

  async spawn(p: Principal, req: SpawnRequest) {
    this.supervisor.runtime(req.runtime).validate({
      prompt: req.prompt ?? null,
      config: req.config ?? {},
      cwd: req.cwd ?? null,
      model: req.model ?? null,
      env: req.env ?? {},
    });
    if (p.kind === 'session') await this.assertLive(p.sessionId);
    const r = await this.store.writer.write((tx) => spawnInTx(tx, this.core, p, req));
    // The answer shows the session as its agent came up (or failed to).
    await this.supervisor.start(r.session.id, 'start');
    return {
      session: await this.session(p, r.session.id),
      lifecycleFd: r.lifecycleFd,
      pipeFd: r.pipeFd,
      created: r.created,
    };
  }

  async session(p: Principal, id: string): Promise<SessionInfo> {
    const row = await this.store.reader
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row || row.zone !== p.zone) throw notFound('session', id);
    return sessionInfo(row);
  }

  async ps(p: Principal, opts: { all?: boolean } = {}): Promise<SessionInfo[]> {
    let q = this.store.reader.selectFrom('sessions').selectAll().where('zone', '=', p.zone);
    if (!opts.all) q = q.where('status', '!=', 'stopped');
    if (p.kind === 'session') q = q.where('parent_id', '=', p.sessionId);
    const rows = await q.orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    return rows.map(sessionInfo);
  }

  /** SIGKILL, or with `graceful` SIGTERM (escalated to SIGKILL after the grace period). */
  async kill(p: Principal, id: string, opts: { graceful?: boolean } = {}) {
    const actor = principalId(p);
    return this.store.writer.write(async (tx) => {
      const row = await this.controllable(tx.db, p, id);
      // Like kill(2) on a reaped pid: an error, and nothing written.
      if (row.status === 'stopped') {
        throw new WarrenError('session_stopped', `session ${id} has already stopped (${row.end_reason})`, {
          id,
        });
      }
      if (opts.graceful && this.supervisor.has(id)) {
        const deadline = await requestTerm(tx, this.core, row, actor);
        return { id, signal: 'SIGTERM' as const, deadline };
      }
      // No live agent to ask: a graceful stop falls back to a hard kill.
      logSignal(
        tx,
        row.zone,
        'SIGKILL',
        id,
        actor,
        opts.graceful ? { fallback: 'no live agent for SIGTERM' } : {},
      );
      await endSession(tx, this.core, id, 'killed', actor);
      return { id, signal: 'SIGKILL' as const, deadline: null };
    });
  }

  /** Inject input: a message on the session's stdin. */
  async send(p: Principal, id: string, text: string) {
    const actor = principalId(p);
    const ref = await this.store.writer.write(async (tx) => {
      const row = await this.controllable(tx.db, p, id);
      // Its stdin closed with it: say that, not "stream stdin:… does not exist".
      if (row.status === 'stopped')
        throw new WarrenError('session_stopped', `session ${id} has stopped (${row.end_reason})`, { id });
      const stdin = await openStreamByRef(tx, row.zone, `stdin:${id}`);
      return postMessage(tx, stdin, actor, { text }, id);
    });
    return { seq: ref.seq };
  }

  /** SIGSTOP / SIGCONT down the whole subtree. */
  async stopOrContinue(p: Principal, id: string, signal: 'SIGSTOP' | 'SIGCONT') {
    const actor = principalId(p);
    return this.store.writer.write(async (tx) => {
      await this.controllable(tx.db, p, id);
      const affected: string[] = [];
      for (const row of await this.subtree(tx, id)) {
        if (row.status === 'stopped') continue;
        if (signal === 'SIGSTOP' && row.status !== 'suspended') {
          logSignal(tx, row.zone, 'SIGSTOP', row.id, actor);
          await setStatus(tx, this.core, row, 'suspended', { reason: 'SIGSTOP', actor });
          tx.afterCommit(() => this.core.effects.stopAgent(row.id));
          affected.push(row.id);
        } else if (signal === 'SIGCONT' && row.status === 'suspended' && row.suspend_reason === 'SIGSTOP') {
          logSignal(tx, row.zone, 'SIGCONT', row.id, actor);
          tx.afterCommit(() => this.core.effects.startAgent(row.id, 'resume'));
          affected.push(row.id);
        }
      }
      return { signal, sessions: affected };
    });
  }

  /** Reanimate a suspended session from where it stood. */
  async resume(p: Principal, id: string) {
    await this.store.writer.write(async (tx) => {
      const row = await this.controllable(tx.db, p, id);
      if (row.status === 'pending' || row.status === 'running' || row.status === 'idle') {
        if (this.supervisor.has(id)) return;
      }
      tx.append({
        zone: row.zone,
        type: 'session.resume_requested',
        actor: principalId(p),
        session_id: id,
        payload: {},
      });
    });
    await this.supervisor.start(id, 'resume');
    return this.session(p, id);
  }

  // ---------------------------------------------------------------- fds and streams

  async write(p: Principal, fd: number, text: string, data?: unknown) {
    const actor = principalId(p);
    const ref = await this.store.writer.write(async (tx) => {
      const { row, stream } = await this.fdAndStream(tx, p, fd);
      if (!canWrite(row.perm)) throw forbidden(`fd ${fd} is read-only (${row.perm})`);
      return postMessage(tx, stream, actor, { text, ...(data !== undefined ? { data } : {}) });
    });
    return { seq: ref.seq };
  }

  /**
   * Read what is due on an fd and move its cursor. With `wait`, block until something
   * arrives or a bounded time passes (then `timedOut`: call again).
   */
  async read(
    p: Principal,
    fd: number,
    opts: { wait?: boolean; waitMs?: number; limit?: number; signal?: AbortSignal } = {},
  ): Promise<ReadResult> {
    const holder = principalId(p);
    const row = await this.store.reader
      .selectFrom('fds')
      .selectAll()
      .where('zone', '=', p.zone)
      .where('holder', '=', holder)
      .where('num', '=', fd)
      .where('closed_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('fd', fd);
    if (!canRead(row.perm)) throw forbidden(`fd ${fd} is write-only`);
    const selfEcho = this.fdTable.stream(row.stream_id)?.selfEcho ?? false;
    const limit = Math.max(1, Math.min(1000, opts.limit ?? 100));
    const waitMs = Math.min(opts.waitMs ?? this.config.maxWaitMs, this.config.maxWaitMs);
    const deadline = this.clock.now() + waitMs;
    for (;;) {
      const cursor = this.fdTable.cursor(row.id, Number(row.cursor));
      const due = await this.store.log.messagesAfter(row.stream_id, cursor, limit);
      const mine = due.filter((e) => selfEcho || e.actor !== holder);
      const last = due.at(-1);
      // A read acknowledges what it returns: the caller has it in hand.
      if (last) this.fdTable.ack(row.id, last.seq);
      const left = deadline - this.clock.now();
      if (mine.length > 0 || !opts.wait || left <= 0 || opts.signal?.aborted) {
        return {
          messages: mine.map(toMessageView),
          cursor: this.fdTable.cursor(row.id, Number(row.cursor)),
          timedOut: mine.length === 0 && opts.wait === true,
        };
      }
      if (last) continue; // only our own echoes were due; look again at once
      await this.delivery.waitFor(row.id, left, opts.signal);
      if (!this.fdTable.get(row.id)) throw notFound('fd', fd);
    }
  }

  async close(p: Principal, fd: number, opts: { force?: boolean } = {}) {
    const actor = principalId(p);
    return this.store.writer.write(async (tx) => {
      const { row, stream } = await this.fdAndStream(tx, p, fd, { reservedOk: true });
      const n = await undelivered(tx.db, this.fdTable, row, stream.self_echo === 1);
      if (n > 0 && !opts.force) {
        throw new WarrenError(
          'undelivered_messages',
          `fd ${fd} has ${n} undelivered message${n === 1 ? '' : 's'}; read them first, or close with force`,
          { fd, undelivered: n },
        );
      }
      const reaped = await closeFdsCascade(tx, this.core, [row], {
        actor,
        reason: 'closed',
        ...(n > 0 ? { forced: true, undelivered: n } : {}),
      });
      return { fd, closed: true, undelivered: n, reaped };
    });
  }

  async listFds(p: Principal, holder = principalId(p)): Promise<FdInfo[]> {
    if (p.kind === 'session' && holder !== p.sessionId)
      throw forbidden('a session can only list its own fds');
    const rows = await this.store.reader
      .selectFrom('fds')
      .innerJoin('streams', 'streams.id', 'fds.stream_id')
      .selectAll('fds')
      .select(['streams.name as stream_name', 'streams.self_echo as stream_self_echo'])
      .where('fds.zone', '=', p.zone)
      .where('fds.holder', '=', holder)
      .where('fds.closed_at', 'is', null)
      .orderBy('fds.num', 'asc')
      .execute();
    return Promise.all(rows.map((r) => this.fdInfo(r, r.stream_name, r.stream_self_echo === 1)));
  }

  async createStream(p: Principal, name: string, selfEcho = false) {
    if (isReservedName(name))
      throw new WarrenError(
        'reserved_name',
        `stream names starting with pipe:, lifecycle: or stdin: are reserved`,
      );
    const actor = principalId(p);
    return this.store.writer.write(async (tx) => {
      await ensureZone(tx, p.zone);
      if (p.kind === 'session') await liveSessionRow(tx, p.sessionId);
      const stream = await createStream(tx, this.ids, {
        zone: p.zone,
        name,
        kind: 'named',
        owner: actor,
        selfEcho,
        actor,
      });
      // The creator's anchor: an operator's room lives with no agent in it.
      const fd = await openFd(tx, this.ids, {
        zone: p.zone,
        holder: actor,
        stream,
        perm: 'rw',
        mode: p.kind === 'operator' ? 'detach' : 'async',
        actor,
      });
      return { stream: streamInfo(stream), fd: fd.num };
    });
  }

  /** Grant another session onto a stream you hold, with at most your permission. */
  async attach(p: Principal, fd: number, target: string, permission: Permission, deliveryMode: DeliveryMode) {
    const actor = principalId(p);
    return this.store.writer.write(async (tx) => {
      const { row, stream } = await this.fdAndStream(tx, p, fd);
      if (!permWithin(permission, row.perm)) {
        throw forbidden(`cannot grant ${permission}: you hold only ${row.perm} on fd ${fd}`);
      }
      const targetRow = await liveSessionRow(tx, target);
      if (targetRow.zone !== p.zone) throw notFound('session', target);
      const granted = await openFd(tx, this.ids, {
        zone: p.zone,
        holder: target,
        stream,
        perm: permission,
        mode: deliveryMode,
        actor,
      });
      return { fd: granted.num, stream: stream.name, target };
    });
  }

  /** Share a stream with your parent and tell it so with a [stream-ref] notice on its stdin. */
  async share(
    p: Principal,
    ref: { fd?: number; streamName?: string },
    permission: Permission = 'rw',
    deliveryMode: DeliveryMode = 'async',
  ) {
    if (p.kind !== 'session') throw forbidden('only a session has a parent to share with');
    return this.store.writer.write(async (tx) => {
      const me = await liveSessionRow(tx, p.sessionId);
      let row: FdsTable;
      let stream: StreamsTable;
      if (ref.fd !== undefined) ({ row, stream } = await this.fdAndStream(tx, p, ref.fd));
      else if (ref.streamName) {
        stream = await openStreamByRef(tx, p.zone, ref.streamName);
        if (isReservedName(stream.name))
          throw new WarrenError('reserved_name', `${stream.name} is reserved plumbing; it cannot be shared`);
        const [held] = await openFdsOfOn(tx, p.sessionId, stream.id);
        if (!held) throw forbidden(`you hold no fd on ${ref.streamName}`);
        row = held;
      } else throw invalid('give fd or streamName');
      if (!permWithin(permission, row.perm))
        throw forbidden(`cannot grant ${permission}: you hold only ${row.perm}`);
      if (!me.parent_id || isInit(me.parent_id))
        throw forbidden('your parent is init; there is nobody to share with');
      const parent = await liveSessionRow(tx, me.parent_id);
      const granted = await openFd(tx, this.ids, {
        zone: p.zone,
        holder: parent.id,
        stream,
        perm: permission,
        mode: deliveryMode,
        actor: p.sessionId,
      });
      const stdin = await openStreamByRef(tx, p.zone, `stdin:${parent.id}`);
      postMessage(
        tx,
        stdin,
        p.sessionId,
        {
          text: `[stream-ref] ${p.sessionId} shared stream "${stream.name}" with you as fd ${granted.num} (${permission}, ${deliveryMode}).`,
          data: {
            streamId: stream.id,
            stream: stream.name,
            fd: granted.num,
            permission,
            deliveryMode,
            from: p.sessionId,
          },
        },
        parent.id,
      );
      return { parent: parent.id, parentFd: granted.num, stream: stream.name };
    });
  }

  async listStreams(p: Principal, opts: { internal?: boolean } = {}): Promise<StreamListing[]> {
    let q = this.store.reader
      .selectFrom('streams')
      .selectAll()
      .where('zone', '=', p.zone)
      .where('closed_at', 'is', null);
    if (!opts.internal) q = q.where('kind', '=', 'named');
    if (p.kind === 'session') {
      q = q.where('id', 'in', (eb) =>
        eb
          .selectFrom('fds')
          .select('stream_id')
          .where('holder', '=', p.sessionId)
          .where('closed_at', 'is', null),
      );
    }
    const streams = await q.orderBy('created_at', 'asc').execute();
    return Promise.all(
      streams.map(async (s) => {
        const fds = await this.store.reader
          .selectFrom('fds')
          .selectAll()
          .where('stream_id', '=', s.id)
          .where('closed_at', 'is', null)
          .orderBy('created_at', 'asc')
          .execute();
        const subscribers = await Promise.all(fds.map((f) => this.fdInfo(f, s.name, s.self_echo === 1)));
        return {
          ...streamInfo(s),
          subscribers,
          bufferDepth: subscribers.reduce((m, f) => Math.max(m, f.pending), 0),
        };
      }),
    );
  }

  /** ipc_terminate: SIGTERM the child behind an fd; the fd stays open. */
  async terminate(p: Principal, fd: number) {
    const actor = principalId(p);
    return this.store.writer.write(async (tx) => {
      const { stream } = await this.fdAndStream(tx, p, fd, { reservedOk: true });
      if (!stream.session_id || (stream.kind !== 'lifecycle' && stream.kind !== 'pipe')) {
        throw invalid(`fd ${fd} is not a pipe or lifecycle fd of a child`);
      }
      const child = await liveSessionRow(tx, stream.session_id);
      if (!this.supervisor.has(child.id)) {
        logSignal(tx, child.zone, 'SIGKILL', child.id, actor, { fallback: 'no live agent for SIGTERM' });
        await endSession(tx, this.core, child.id, 'killed', actor);
        return { session: child.id, signal: 'SIGKILL' as const, deadline: null };
      }
      const deadline = await requestTerm(tx, this.core, child, actor);
      return { session: child.id, signal: 'SIGTERM' as const, deadline };
    });
  }

  /**
   * Wait (bounded) until a child is idle with nothing pending, or stopped. Returns at once
   * when it already is; otherwise on its next status change, or `timedOut` — call again.
   */
  async waitChild(
    p: Principal,
    ref: { fd?: number; session?: string },
    opts: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<{
    session: string;
    status: string;
    endReason: string | null;
    lastMessage: string | null;
    timedOut: boolean;
  }> {
    const id = await this.childOf(p, ref);
    // Input written before this call must have been taken, and its turn ended.
    const mark = await this.store.log.head();
    const deadline = this.clock.now() + Math.min(opts.waitMs ?? this.config.maxWaitMs, this.config.maxWaitMs);
    let wake: () => void = () => {};
    const unsubscribe = this.store.writer.onCommit((events) => {
      if (events.some((e) => e.session_id === id && e.type === 'session.status')) wake();
    });
    const unTurn = this.delivery.onTurnRecorded((sid) => {
      if (sid === id) wake();
    });
    const abort = () => wake();
    opts.signal?.addEventListener('abort', abort);
    try {
      for (;;) {
        // Armed before looking, so a change between the look and the wait is not missed.
        const changed = new Promise<void>((resolve) => {
          wake = resolve;
        });
        const s = await this.session(p, id);
        const settled =
          s.status === 'stopped' || (s.status === 'idle' && !(await this.hasUntakenInput(id, mark)));
        const left = deadline - this.clock.now();
        if (settled || left <= 0 || opts.signal?.aborted) {
          return {
            session: id,
            status: s.status,
            endReason: s.endReason,
            lastMessage: s.lastMessage,
            timedOut: !settled,
          };
        }
        let timer: TimerHandle | undefined;
        await Promise.race([
          changed,
          new Promise<void>((r) => (timer = this.clock.setTimeout(r, left, { keepAlive: true }))),
        ]);
        if (timer) this.clock.clearTimeout(timer);
      }
    } finally {
      unsubscribe();
      unTurn();
      opts.signal?.removeEventListener('abort', abort);
    }
  }

  // ---------------------------------------------------------------- operator rooms

  roomCreate(p: Principal, name: string, selfEcho = false) {
    if (p.kind !== 'operator')
      throw forbidden('rooms are created by operators; agents use ipc_create_stream');
    return this.createStream(p, name, selfEcho);
  }

  async roomAttach(
    p: Principal,
    sessionId: string,
    streamRef: string,
    permission: Permission = 'rw',
    mode: DeliveryMode = 'async',
  ) {
    const actor = principalId(p);
    return this.store.writer.write(async (tx) => {
      const stream = await this.namedStream(tx, p.zone, streamRef);
      const target = await liveSessionRow(tx, sessionId);
      if (target.zone !== p.zone) throw notFound('session', sessionId);
      if (isInit(sessionId)) throw forbidden('init cannot be attached to rooms');
      const [existing] = await openFdsOfOn(tx, sessionId, stream.id);
      if (existing) return { session: sessionId, stream: stream.name, fd: existing.num, created: false };
      const fd = await openFd(tx, this.ids, {
        zone: p.zone,
        holder: sessionId,
        stream,
        perm: permission,
        mode,
        actor,
      });
      return { session: sessionId, stream: stream.name, fd: fd.num, created: true };
    });
  }

  /** Idempotent: detaching what is not attached is not an error. */
  async roomDetach(p: Principal, sessionId: string, streamRef: string) {
    const actor = principalId(p);
    return this.store.writer.write(async (tx) => {
      const stream = await this.namedStream(tx, p.zone, streamRef);
      const fds = await openFdsOfOn(tx, sessionId, stream.id);
      await closeFdsCascade(tx, this.core, fds, { actor, reason: 'detached by operator' });
      return { session: sessionId, stream: stream.name, detached: fds.length };
    });
  }

  async attachments(p: Principal, sessionId: string): Promise<FdInfo[]> {
    const fds = await this.listFds({ kind: 'operator', name: 'view', zone: p.zone }, sessionId);
    return fds.filter((f) => !isReservedName(f.streamName));
  }

  /** Evict every subscriber and remove the room. */
  async roomClose(p: Principal, streamRef: string, opts: { force?: boolean } = {}) {
    const actor = principalId(p);
    return this.store.writer.write(async (tx) => {
      const stream = await this.namedStream(tx, p.zone, streamRef);
      const evicted = (
        await tx.db
          .selectFrom('fds')
          .select('holder')
          .where('stream_id', '=', stream.id)
          .where('closed_at', 'is', null)
          .execute()
      ).map((r) => r.holder);
      const reaped = await tearDownStream(tx, this.core, stream, actor, 'closed by operator', !opts.force);
      return { stream: stream.name, id: stream.id, evicted, reaped };
    });
  }

  // ---------------------------------------------------------------- the log

  async sessionEvents(
    p: Principal,
    id: string,
    opts: { from?: number; limit?: number },
  ): Promise<LogEvent[]> {
    await this.session(p, id);
    return this.store.log.sessionEvents(id, opts);
  }

  events(p: Principal, q: Omit<EventQuery, 'zone'>): Promise<LogEvent[]> {
    return this.store.log.events({ ...q, zone: p.zone });
  }

  async transcript(p: Principal, streamRef: string, opts: { before?: number; limit?: number }) {
    const stream = await this.store.reader
      .selectFrom('streams')
      .selectAll()
      .where('zone', '=', p.zone)
      .where((eb) => eb.or([eb('id', '=', streamRef), eb('name', '=', streamRef)]))
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    if (!stream) throw notFound('stream', streamRef);
    if (p.kind === 'session') {
      const holds = await this.store.reader
        .selectFrom('fds')
        .select('id')
        .where('holder', '=', p.sessionId)
        .where('stream_id', '=', stream.id)
        .executeTakeFirst();
      if (!holds) throw forbidden(`you have never held an fd on ${stream.name}`);
    }
    const events = await this.store.log.transcript(stream.id, opts);
    return { stream: streamInfo(stream), messages: events.map(toMessageView) };
  }

  // ---------------------------------------------------------------- internals

  /** The child behind an fd (its lifecycle or pipe) or a session id the caller controls. */
  private async childOf(p: Principal, ref: { fd?: number; session?: string }): Promise<string> {
    if (ref.fd !== undefined) {
      const row = await this.store.reader
        .selectFrom('fds')
        .innerJoin('streams', 'streams.id', 'fds.stream_id')
        .select(['streams.session_id', 'streams.kind'])
        .where('fds.zone', '=', p.zone)
        .where('fds.holder', '=', principalId(p))
        .where('fds.num', '=', ref.fd)
        .where('fds.closed_at', 'is', null)
        .executeTakeFirst();
      if (!row) throw notFound('fd', ref.fd);
      if (!row.session_id || (row.kind !== 'lifecycle' && row.kind !== 'pipe')) {
        throw invalid(`fd ${ref.fd} is not a pipe or lifecycle fd of a child`);
      }
      return row.session_id;
    }
    if (!ref.session) throw invalid('give fd or session');
    const id = ref.session;
    // A check, not a change: the reader answers it without taking the writer.
    await this.controllable(this.store.reader, p, id);
    return id;
  }

  /** Whether input up to `mark` on a session's async fds is still unacknowledged (not yet taken by a finished turn). */
  private async hasUntakenInput(id: string, mark: number): Promise<boolean> {
    for (const fd of this.fdTable.heldBy(id)) {
      if (fd.mode !== 'async' || !canRead(fd.perm)) continue;
      const acked = this.fdTable.acked(fd.id);
      if (acked >= mark) continue;
      const selfEcho = this.fdTable.stream(fd.stream_id)?.selfEcho ?? false;
      let q = this.store.reader
        .selectFrom('events')
        .select('seq')
        .where('stream_id', '=', fd.stream_id)
        .where('type', '=', 'stream.message')
        .where('seq', '>', acked)
        .where('seq', '<=', mark);
      if (!selfEcho) q = q.where('actor', '!=', id);
      if (await q.limit(1).executeTakeFirst()) return true;
    }
    return false;
  }

  private async fdAndStream(tx: WriteTx, p: Principal, fd: number, opts: { reservedOk?: boolean } = {}) {
    if (p.kind === 'session') await liveSessionRow(tx, p.sessionId);
    const row = await fdRow(tx, p.zone, principalId(p), fd);
    const stream = await tx.db
      .selectFrom('streams')
      .selectAll()
      .where('id', '=', row.stream_id)
      .executeTakeFirstOrThrow();
    if (stream.closed_at !== null && !opts.reservedOk)
      throw new WarrenError('conflict', `the stream behind fd ${fd} is closed`);
    return { row, stream };
  }

  private async namedStream(tx: WriteTx, zone: string, ref: string): Promise<StreamsTable> {
    if (isReservedName(ref)) throw new WarrenError('reserved_name', `${ref} is reserved plumbing`);
    const stream = await openStreamByRef(tx, zone, ref);
    if (stream.kind !== 'named')
      throw new WarrenError('reserved_name', `${stream.name} is reserved plumbing`);
    return stream;
  }

  private async fdInfo(r: FdsTable, streamName: string, selfEcho: boolean): Promise<FdInfo> {
    return {
      fd: r.num,
      id: r.id,
      holder: r.holder,
      streamId: r.stream_id,
      streamName,
      permission: r.perm,
      deliveryMode: r.mode,
      cursor: this.fdTable.cursor(r.id, Number(r.cursor)),
      owned: r.owned === 1,
      spawned: r.spawned === 1,
      pending: await undelivered(this.store.reader, this.fdTable, r, selfEcho),
    };
  }

  /** Operators control any session in their zone; a session controls itself and its descendants. */
  private async controllable(db: WriteTx['db'], p: Principal, id: string): Promise<SessionsTable> {
    const row = await db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || row.zone !== p.zone) throw notFound('session', id);
    if (isInit(id)) throw forbidden('init cannot be signalled');
    if (p.kind === 'operator') return row;
    let cur: SessionsTable | undefined = row;
    while (cur) {
      if (cur.id === p.sessionId) return row;
      if (!cur.parent_id) break;
      cur = await db.selectFrom('sessions').selectAll().where('id', '=', cur.parent_id).executeTakeFirst();
    }
    throw forbidden(`${id} is not ${p.sessionId} or one of its descendants`);
  }

  private async subtree(tx: WriteTx, id: string): Promise<SessionsTable[]> {
    const out: SessionsTable[] = [];
    let frontier = [id];
    while (frontier.length > 0) {
      const rows = await tx.db.selectFrom('sessions').selectAll().where('id', 'in', frontier).execute();
      out.push(...rows);
      const kids = await tx.db
        .selectFrom('sessions')
        .select('id')
        .where('parent_id', 'in', frontier)
        .execute();
      frontier = kids.map((k) => k.id);
    }
    return out;
  }

  private async assertLive(id: string): Promise<void> {
    const row = await this.store.reader
      .selectFrom('sessions')
      .select(['status', 'end_reason'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('session', id);
    if (row.status === 'stopped')
      throw new WarrenError('session_stopped', `session ${id} has stopped (${row.end_reason})`);
  }

  private armTermDeadline(id: string, at: number): void {
    const prev = this.termTimers.get(id);
    if (prev) this.clock.clearTimeout(prev);
    const t = this.clock.setTimeout(
      () => {
        this.termTimers.delete(id);
        void this.escalate(id);
      },
      Math.max(0, at - this.clock.now()),
    );
    this.termTimers.set(id, t);
  }

  /** The grace period ran out: SIGKILL. */
  private async escalate(id: string): Promise<void> {
    await this.store.writer
      .write(async (tx) => {
        const row = await sessionRow(tx, id);
        if (row.status === 'stopped' || row.term_deadline === null || row.term_deadline > tx.now) return;
        logSignal(tx, row.zone, 'SIGKILL', id, KERNEL_ACTOR, { escalatedFrom: 'SIGTERM' });
        await endSession(tx, this.core, id, 'killed', KERNEL_ACTOR, { escalatedFrom: 'SIGTERM' });
      })
      .catch((error) =>
        console.error(`warren: escalating SIGTERM of ${id} failed:`, (error as Error).message),
      );
  }

  /** After a restart no agent is running: live sessions lost their transport. */
  private async recover(): Promise<void> {
    const lost = await this.store.writer.write(async (tx) => {
      const rows = await tx.db
        .selectFrom('sessions')
        .selectAll()
        .where('status', 'in', ['pending', 'running', 'idle'])
        .where('depth', '>', 0)
        .execute();
      for (const r of rows) await setStatus(tx, this.core, r, 'suspended', { reason: 'kernel restart' });
      const terms = await tx.db
        .selectFrom('sessions')
        .select(['id', 'term_deadline'])
        .where('status', '!=', 'stopped')
        .where('term_deadline', 'is not', null)
        .execute();
      for (const t of terms) tx.afterCommit(() => this.armTermDeadline(t.id, Number(t.term_deadline)));
      return rows.map((r) => r.id);
    });
    this.lost = lost;
  }
}

export { initIdOf, sendSignal };
