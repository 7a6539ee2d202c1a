import { CompiledQuery, type ControlledTransaction, type Kysely, sql, type Transaction } from 'kysely';
import type { Clock } from '../util/clock.ts';
import type { IdGenerator } from '../util/ids.ts';
import { type Log, stderrLog } from '../util/log.ts';
import { WarrenError } from '../vocab/errors.ts';
import type { Connections, DialectKind, SqliteDirect } from './dialect.ts';
import { EventRef, type LogEvent, type NewEvent } from './events.ts';
import { commitNotice } from './notice.ts';
import type { Database } from './schema.ts';
import { UnitConditions } from './unit-conditions.ts';

/** What a unit of work sees: the open transaction and the log to append to. */
export interface WriteTx {
  readonly db: Transaction<Database> | Kysely<Database>;
  readonly kind: DialectKind;
  /** The time of this batch: one clock reading for every row it writes. */
  readonly now: number;
  append(event: NewEvent): EventRef;
  /** Runs once the batch is durable, before the caller's promise resolves. */
  afterCommit(fn: () => void): void;
  /**
   * The first row of a fixed, hot query (`?` placeholders, and no `?` anywhere else in the
   * text), without the query builder: on SQLite a cached prepared statement on the writer's
   * connection, on PostgreSQL a named prepared statement, one round trip. The same rows as
   * `db` gives, the batch's own uncommitted writes included.
   */
  first<R>(text: string, params: readonly unknown[]): Promise<R | undefined>;
  /** A fixed, hot statement that returns nothing, the same way as `first`. */
  run(text: string, params: readonly unknown[]): Promise<void>;
  /**
   * A unit queued with `readsFirst` calls this before its first statement that writes (it
   * is a no-op for any other unit, which is isolated from the start).
   */
  isolate(): Promise<void>;
}

/**
 * A unit as code above the kernel holds it: everything but the kernel's tables. The kernel's
 * `…In` calls take one and act inside it (every unit the writer hands out is a WriteTx).
 */
export type WriteUnit = Omit<WriteTx, 'db' | 'first' | 'run'>;

/** The writer's own unit behind a WriteUnit handed back to the kernel. */
export const unitTx = (unit: WriteUnit): WriteTx => unit as WriteTx;

/** How long the writer runs batches back to back before it lets the event loop turn (`drain`). */
const WRITER_SLICE_MS = 5;

export type CommitListener = (events: readonly LogEvent[]) => void;

/** One batch, as observers see it (metrics, `warren status`): how big, how long, whether it committed. */
export interface BatchStats {
  units: number;
  /** Events it committed (0 when it failed). */
  events: number;
  /** From its first unit to its commit, in milliseconds. */
  ms: number;
  /** Whether the store took the batch (false: the commit itself failed). */
  ok: boolean;
  /** Units that refused themselves (threw their own error: bad input, a conflict) and wrote nothing. */
  refused: number;
}

export type BatchObserver = (stats: BatchStats) => void;

/** Wraps a function so it runs in the async context it was wrapped in (`AsyncResource.bind`). */
export type ContextCarrier = <F extends (...args: never[]) => unknown>(fn: F) => F;

interface Unit {
  fn: (tx: WriteTx) => Promise<unknown>;
  /** A unit that only appends cannot fail halfway, so it needs no savepoint. */
  appendOnly: boolean;
  /**
   * A unit that reads before it writes needs its savepoint only from its first write
   * (`tx.isolate()`): one that only reads and appends, like a message write, takes none.
   */
  readsFirst: boolean;
  /** It may commit while `mayWrite` says no: the node's own rejoin. */
  whileFenced: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Pending {
  event: NewEvent;
  ref: EventRef;
  payload: string;
}

/** Fill in a pending event's ref now that it has its seq: the event as the log holds it. */
function sequenced(p: Pending, seq: number, id: string, ts: number): LogEvent {
  p.ref.seq = seq;
  p.ref.id = id;
  p.ref.ts = ts;
  const e = p.event;
  return {
    seq,
    id,
    zone: e.zone,
    ts,
    type: e.type,
    actor: e.actor,
    session_id: e.session_id ?? null,
    stream_id: e.stream_id ?? null,
    payload: e.payload ?? {},
  };
}

const EVENT_COLUMNS = [
  'seq',
  'id',
  'zone',
  'ts',
  'type',
  'actor',
  'session_id',
  'stream_id',
  'payload',
] as const;

/**
 * PostgreSQL: take the seqs and insert the rows in one statement, one round trip whatever
 * the batch size. The `update` holds `log_head`'s row lock until the transaction commits,
 * as before, so seq order stays commit order across writers; the rows come as arrays.
 */
const PG_SEQUENCE_SQL = `with h as (update log_head set seq = seq + $1::bigint where id = 1 returning seq),
ins as (insert into events (seq, id, zone, ts, type, actor, session_id, stream_id, payload)
  select h.seq - $1::bigint + v.n, v.id, v.zone, $2::bigint, v.type, v.actor, v.session_id, v.stream_id, v.payload
  from h, unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
    with ordinality as v(id, zone, type, actor, session_id, stream_id, payload, n))
select seq from h`;

/**
 * The same, announcing the batch on a channel as it commits (NOTIFY is transactional): its
 * last seq, then what the writer adds (`commitNotice`: the node, and the events when they
 * fit). Other nodes on the database wake up, and fan the events out or read the log.
 */
const PG_SEQUENCE_NOTIFY_SQL = PG_SEQUENCE_SQL.replace(
  'select seq from h',
  'select seq, pg_notify($10, seq::text || $11) from h',
);

/** SQLite: one prepared one-row insert, run per event (faster there than a multi-row VALUES, measured ~1.4x). */
const SQLITE_HEAD_SQL = 'update log_head set seq = seq + ? where id = 1 returning seq';

const SQLITE_INSERT_SQL = `insert into "events" (${EVENT_COLUMNS.map((c) => `"${c}"`).join(', ')}) values (${EVENT_COLUMNS.map(() => '?').join(', ')})`;

/**
 * The only path that writes. Units queue up; whatever is queued when the writer is free
 * becomes one batch (group commit): one transaction, begun when a unit first needs it, each
 * unit that writes inside its own savepoint so one failure does not sink its neighbours.
 * Seqs are taken from `log_head` at the end of the batch, under its row lock, so seq order
 * is commit order and has no gaps.
 */
export class GroupCommitWriter {
  private queue: Unit[] = [];
  private running = false;
  private closed = false;
  private listeners = new Set<CommitListener>();
  /** Listeners of every node's commits, in seq order (see `onAnyCommit`). */
  private anyListeners = new Set<CommitListener>();
  /** Listeners of other nodes' commits only. */
  private remoteListeners = new Set<CommitListener>();
  /**
   * Set by the cluster assembly: `onAnyCommit` listeners then hear this node's commits too
   * from the cluster's ordered feed (`publishOrdered`), interleaved with the other nodes' in
   * seq order, instead of straight from the commit path.
   */
  orderedFanOut = false;
  /**
   * PostgreSQL with several nodes: the channel each commit is announced on, and this node's
   * id, which the notice names (set by the cluster assembly; unset, a commit notifies
   * nobody and pays nothing for it).
   */
  notify: { channel: string; node: string } | undefined;
  private observers = new Set<BatchObserver>();
  private idle: Array<() => void> = [];
  /** `first`'s and `run`'s texts with PostgreSQL's numbered placeholders (a few fixed texts). */
  private readonly pgTexts = new Map<string, string>();
  /** Where a failing commit listener is reported (set by the assembly). */
  log: Log = stderrLog;
  /**
   * When set (tracing), each unit, and what it schedules after commit, runs in its writer's
   * async context rather than the batch's: an agent started by a spawn belongs to that call.
   */
  carry: ContextCarrier | undefined;
  /** Checks run first in every unit queued inside `conditions.run` (unit-conditions.ts). */
  readonly conditions = new UnitConditions();
  /**
   * PostgreSQL in a cluster (cluster.ts): how long a transaction begun now may sit idle before
   * the server ends it, or null for no bound. A node paused mid-transaction (SIGSTOP, a VM
   * frozen) holds its locks until it resumes and would then commit for sessions another node
   * has taken meanwhile; bounded, the server rolls it back before any takeover can happen.
   */
  idleLimitMs: (() => number | null) | undefined;
  /**
   * In a cluster (cluster.ts): whether this node may write now, on its own clock. A node that
   * has not renewed its lease in time writes nothing more, even in the moment after a pause
   * before its watchdog has run: every unit queued meanwhile is refused `unavailable`.
   */
  mayWrite: (() => boolean) | undefined;

  constructor(
    private readonly conn: Connections,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly maxBatch = 1024,
  ) {
    conn.named?.add(PG_SEQUENCE_SQL);
    conn.named?.add(PG_SEQUENCE_NOTIFY_SQL);
  }

  /**
   * Queue a unit of work. `appendOnly`: it only appends. `readsFirst`: it only reads (and
   * appends) until it calls `tx.isolate()`, which it must before any statement that writes.
   */
  write<R>(
    fn: (tx: WriteTx) => Promise<R>,
    opts: { appendOnly?: boolean; readsFirst?: boolean; whileFenced?: boolean } = {},
  ): Promise<R> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const check = this.conditions.current();
    const unit: (tx: WriteTx) => Promise<R> = check
      ? async (tx) => {
          // In the transaction from its first statement, so the check's lock holds to the commit.
          await tx.isolate();
          await check(tx);
          return fn(tx);
        }
      : fn;
    return new Promise<R>((resolve, reject) => {
      this.queue.push({
        fn: this.carry ? this.carry(unit) : unit,
        appendOnly: !check && (opts.appendOnly ?? false),
        readsFirst: !check && (opts.readsFirst ?? false),
        whileFenced: opts.whileFenced ?? false,
        resolve: resolve as (v: unknown) => void,
        reject,
      });
      if (!this.running) {
        this.running = true;
        // Let callers in the same tick join this batch.
        queueMicrotask(() => void this.drain());
      }
    });
  }

  /** Append events with nothing else in the transaction. */
  append(events: NewEvent[]): Promise<EventRef[]> {
    return this.write(async (tx) => events.map((e) => tx.append(e)), { appendOnly: true });
  }

  onCommit(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Every committed batch, this node's and (when several nodes share the database) the
   * others', each in seq order: for what only fans out (wake-ups, subscriptions, the fd
   * index), never for reactions that write, which the committing node makes once.
   */
  onAnyCommit(listener: CommitListener): () => void {
    this.anyListeners.add(listener);
    return () => this.anyListeners.delete(listener);
  }

  /** Only the batches other nodes committed. */
  onRemoteCommit(listener: CommitListener): () => void {
    this.remoteListeners.add(listener);
    return () => this.remoteListeners.delete(listener);
  }

  /**
   * The cluster's ordered feed (cluster/tail.ts): every node's events in seq order, gap-free
   * from this node's point of view; `remote` are those another node committed.
   */
  publishOrdered(events: readonly LogEvent[], remote: readonly LogEvent[]): void {
    if (events.length > 0) for (const l of this.anyListeners) this.runSafely(() => l(events));
    if (remote.length > 0) for (const l of this.remoteListeners) this.runSafely(() => l(remote));
  }

  /** Called after every batch, committed or not; must be cheap and must not throw. */
  onBatch(observer: BatchObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** The units that may run now: while `mayWrite` says no, the others are refused. */
  private refuseWhileFenced(batch: Unit[]): Unit[] {
    if (!this.mayWrite || this.mayWrite()) return batch;
    const error = new WarrenError(
      'unavailable',
      "this node's cluster lease has lapsed: it writes nothing until it holds one again",
    );
    for (const unit of batch) if (!unit.whileFenced) unit.reject(error);
    return batch.filter((unit) => unit.whileFenced);
  }

  /** `idleLimitMs` for the transaction just begun (PostgreSQL only; SET takes no parameters). */
  private async boundIdle(trx: ControlledTransaction<Database>): Promise<void> {
    const ms = this.conn.kind === 'postgres' ? this.idleLimitMs?.() : null;
    if (ms == null) return;
    // 0 would mean no bound at all: never less than 1 ms.
    const limit = Math.max(1, Math.floor(ms));
    await sql.raw(`set local idle_in_transaction_session_timeout = ${limit}`).execute(trx);
  }

  /** Resolves when everything queued so far is committed (or failed). */
  drained(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  async close(): Promise<void> {
    await this.drained();
    this.closed = true;
  }

  private async drain(): Promise<void> {
    let turnStart = performance.now();
    while (this.queue.length > 0) {
      // On SQLite a batch commits within one chain of promises, and what it wakes (deliveries,
      // agents' answers) queues the next: without a pause a cascade never lets the loop turn.
      // Past a slice of this turn, the next batch waits for the loop to have polled for I/O.
      if (performance.now() - turnStart >= WRITER_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        turnStart = performance.now();
      }
      // The WAL has grown past its bound under writes that never paused: hold this batch
      // while the checkpoint worker catches up, so its commit starts the WAL over.
      if (this.conn.wal?.behind) await this.conn.wal.catchUp();
      const batch = this.refuseWhileFenced(this.queue.splice(0, this.maxBatch));
      if (batch.length === 0) continue;
      const started = this.observers.size > 0 ? performance.now() : 0;
      const { events, refused } = await this.runBatch(batch);
      if (this.observers.size > 0) {
        const stats = {
          units: batch.length,
          events: events ?? 0,
          ms: performance.now() - started,
          ok: events !== null,
          refused,
        };
        for (const o of this.observers) this.runSafely(() => o(stats));
      }
    }
    this.running = false;
    for (const r of this.idle.splice(0)) r();
  }

  /**
   * The number of events committed, or null when the batch failed; and how many of its
   * units refused themselves (a unit's own throw is its answer, not the store failing).
   *
   * The transaction begins only when a unit needs one: before a unit that may write, or
   * when a `readsFirst` unit isolates. Until then units read on the writer's connection
   * outside a transaction, which sees the same rows (this writer is the only one on it, and
   * on PostgreSQL READ COMMITTED reads see only what is committed anyway). A batch that
   * never begins (appends, and reads that lead to appends: message writes) is sequenced
   * in one autocommit statement on PostgreSQL, one short transaction on SQLite.
   */
  private async runBatch(batch: Unit[]): Promise<{ events: number | null; refused: number }> {
    const now = this.clock.now();
    const outcomes: Outcome[] = [];
    // Set while the one unit of a batch of one runs: its throw is a refusal, not a failed commit.
    let aloneRunning = false;
    const pending: Pending[] = [];
    const after: Array<() => void> = [];
    let trx: ControlledTransaction<Database> | undefined;
    try {
      // Savepoints keep a failing unit from sinking its neighbours. A batch of one has no
      // neighbour: if its unit fails, the whole transaction (all it wrote) is rolled back
      // and the unit rejected with its own error, below, so it needs none.
      const isolate = batch.length > 1;
      // After a unit succeeds its savepoint is left open ('dirty') and released only when
      // the next unit needs a fresh one (one round trip on PostgreSQL) or by the commit.
      // After a unit fails, `rollback to` leaves the savepoint in place, ready for reuse.
      let savepoint: 'none' | 'clean' | 'dirty' = 'none';
      const db = () => trx ?? this.conn.writer;
      for (const unit of batch) {
        const mark = pending.length;
        const markAfter = after.length;
        let isolated = false;
        const isolateUnit = async () => {
          if (isolated) return;
          isolated = true;
          if (!trx) {
            trx = await this.conn.writer.startTransaction().execute();
            await this.boundIdle(trx);
          }
          if (!isolate) return;
          if (savepoint === 'none') await this.savepoint(trx, 'savepoint unit');
          else if (savepoint === 'dirty') await this.renewSavepoint(trx);
          savepoint = 'clean';
        };
        const tx = this.unitTx(db, now, pending, after, isolateUnit);
        if (unit.appendOnly) {
          // No savepoint, but it can still throw (a payload JSON cannot encode): drop its
          // events and fail it alone, not the whole batch.
          try {
            outcomes.push({ ok: true, value: await unit.fn(tx) });
          } catch (error) {
            pending.length = mark;
            after.length = markAfter;
            outcomes.push({ ok: false, error });
          }
          continue;
        }
        if (!unit.readsFirst) await isolateUnit();
        if (!isolate) {
          // Alone in the batch: a throw goes to the catch below, which rolls back and rejects it.
          aloneRunning = true;
          outcomes.push({ ok: true, value: await unit.fn(tx) });
          aloneRunning = false;
          continue;
        }
        try {
          const value = await unit.fn(tx);
          if (isolated) savepoint = 'dirty';
          outcomes.push({ ok: true, value });
        } catch (error) {
          // Not isolated: it wrote nothing (it only read), so dropping its appends undoes it.
          if (isolated && trx) await this.savepoint(trx, 'rollback to savepoint unit');
          pending.length = mark;
          after.length = markAfter;
          outcomes.push({ ok: false, error });
        }
      }
      let committed: LogEvent[];
      if (trx) {
        committed = await this.sequence(trx, pending, now);
        await trx.commit().execute();
        trx = undefined;
      } else {
        committed = await this.sequenceAlone(pending, now);
      }
      this.settle(batch, outcomes, committed, after);
      return {
        events: committed.length,
        refused: outcomes.filter((o) => !o.ok && o.error instanceof WarrenError).length,
      };
    } catch (error) {
      if (trx)
        await trx
          .rollback()
          .execute()
          .catch(() => {});
      for (const unit of batch) unit.reject(error);
      // The unit's own refusal (a WarrenError: bad input, a conflict) is its answer; anything
      // else (the database's error, a commit that failed) is a failed batch.
      return aloneRunning && error instanceof WarrenError
        ? { events: 0, refused: 1 }
        : { events: null, refused: 0 };
    }
  }

  /**
   * Sequence a batch that needed no transaction of its own: on PostgreSQL the one statement
   * (autocommit; atomic, and holding `log_head`'s lock to its commit like any transaction),
   * on SQLite the head and the rows in one short transaction on the writer's connection.
   */
  private async sequenceAlone(pending: Pending[], now: number): Promise<LogEvent[]> {
    if (pending.length === 0) return [];
    const direct = this.conn.direct;
    if (!direct) return this.sequencePostgres(this.conn.writer, pending, now);
    // IMMEDIATE: wait for the write lock at `begin` (see ImmediateSqliteDriver in dialect.ts).
    direct.run('begin immediate', []);
    try {
      const events = this.sequenceSqlite(direct, pending, now);
      direct.run('commit', []);
      return events;
    } catch (error) {
      try {
        direct.run('rollback', []);
      } catch {
        // Already rolled back by SQLite itself (a failed commit): nothing left to undo.
      }
      throw error;
    }
  }

  /** What one unit sees; its appends and after-commit hooks go to the batch's lists. */
  private unitTx(
    db: () => Transaction<Database> | Kysely<Database>,
    now: number,
    pending: Pending[],
    after: Array<() => void>,
    isolate: () => Promise<void>,
  ): WriteTx {
    const first = <R>(text: string, params: readonly unknown[]) => this.first<R>(db(), text, params);
    const run = (text: string, params: readonly unknown[]) => this.run(db(), text, params);
    return {
      // Read at each use: the transaction may begin partway through a unit (`isolate`).
      get db() {
        return db();
      },
      kind: this.conn.kind,
      now,
      first,
      run,
      isolate,
      append: (event) => {
        // A malformed event fails its own unit here, instead of the whole batch at insert.
        if (
          typeof event.zone !== 'string' ||
          typeof event.type !== 'string' ||
          typeof event.actor !== 'string'
        ) {
          throw new TypeError(`an event needs a string zone, type and actor (type: ${String(event.type)})`);
        }
        const ref = new EventRef();
        pending.push({ event, ref, payload: JSON.stringify(event.payload ?? {}) });
        return ref;
      },
      afterCommit: (fn) => after.push(this.carry ? this.carry(fn) : fn),
    };
  }

  private async first<R>(
    db: Transaction<Database> | Kysely<Database>,
    text: string,
    params: readonly unknown[],
  ): Promise<R | undefined> {
    if (this.conn.direct) return this.conn.direct.get<R>(text, params);
    const result = await db.executeQuery<R>(CompiledQuery.raw(this.pgText(text), [...params]));
    return result.rows[0];
  }

  private async run(
    db: Transaction<Database> | Kysely<Database>,
    text: string,
    params: readonly unknown[],
  ): Promise<void> {
    if (this.conn.direct) return this.conn.direct.run(text, params);
    await db.executeQuery(CompiledQuery.raw(this.pgText(text), [...params]));
  }

  /** A `?` text with PostgreSQL's numbered placeholders, registered as a named statement. */
  private pgText(text: string): string {
    let pgText = this.pgTexts.get(text);
    if (pgText === undefined) {
      let n = 0;
      pgText = text.replace(/\?/g, () => `$${++n}`);
      this.pgTexts.set(text, pgText);
      this.conn.named?.add(pgText);
    }
    return pgText;
  }

  /** The batch is durable: listeners first (in seq order), then hooks, then callers. */
  private settle(batch: Unit[], outcomes: Outcome[], committed: LogEvent[], after: Array<() => void>): void {
    this.publish(committed);
    for (const fn of after) this.runSafely(fn);
    batch.forEach((unit, i) => {
      const o = outcomes[i]!;
      if (o.ok) unit.resolve(o.value);
      else unit.reject(o.error);
    });
  }

  /** Inside the batch's transaction: take `n` seqs under the log_head row lock, insert the rows. */
  private async sequence(db: Transaction<Database>, pending: Pending[], now: number): Promise<LogEvent[]> {
    if (pending.length === 0) return [];
    if (this.conn.direct) return this.sequenceSqlite(this.conn.direct, pending, now);
    return this.sequencePostgres(db, pending, now);
  }

  /**
   * SQLite: the same, on the writer's connection without the query builder (inside the open
   * transaction): a prepared one-row insert per event, run synchronously.
   */
  private sequenceSqlite(direct: SqliteDirect, pending: Pending[], now: number): LogEvent[] {
    const head = direct.get<{ seq: number }>(SQLITE_HEAD_SQL, [pending.length]);
    let seq = Number(head!.seq) - pending.length;
    const events: LogEvent[] = new Array(pending.length);
    for (let i = 0; i < pending.length; i++) {
      const p = pending[i]!;
      seq += 1;
      const ev = sequenced(p, seq, this.ids.event(), now);
      direct.run(SQLITE_INSERT_SQL, [
        seq,
        ev.id,
        ev.zone,
        now,
        ev.type,
        ev.actor,
        ev.session_id,
        ev.stream_id,
        p.payload,
      ]);
      events[i] = ev;
    }
    return events;
  }

  /** One statement: seqs from `log_head` and the rows, as arrays (see PG_SEQUENCE_SQL). */
  private async sequencePostgres(
    db: Transaction<Database> | Kysely<Database>,
    pending: Pending[],
    now: number,
  ): Promise<LogEvent[]> {
    const n = pending.length;
    const ids: string[] = new Array(n);
    const zones: string[] = new Array(n);
    const types: string[] = new Array(n);
    const actors: string[] = new Array(n);
    const sessions: Array<string | null> = new Array(n);
    const streams: Array<string | null> = new Array(n);
    const payloads: string[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const { event: e, payload } = pending[i]!;
      // Ids in batch order, as seqs will be: both stay monotonic together.
      ids[i] = this.ids.event();
      zones[i] = e.zone;
      types[i] = e.type;
      actors[i] = e.actor;
      sessions[i] = e.session_id ?? null;
      streams[i] = e.stream_id ?? null;
      payloads[i] = payload;
    }
    const params = [n, now, ids, zones, types, actors, sessions, streams, payloads];
    const notify = this.notify;
    const head = await db.executeQuery<{ seq: number }>(
      notify === undefined
        ? CompiledQuery.raw(PG_SEQUENCE_SQL, params)
        : CompiledQuery.raw(PG_SEQUENCE_NOTIFY_SQL, [
            ...params,
            notify.channel,
            this.notice(notify.node, now, pending, ids),
          ]),
    );
    const first = Number(head.rows[0]!.seq) - n + 1;
    const events: LogEvent[] = new Array(n);
    for (let i = 0; i < n; i++) {
      events[i] = sequenced(pending[i]!, first + i, ids[i]!, now);
    }
    return events;
  }

  /** What the batch's NOTIFY says after its seq (see store/notice.ts). */
  private notice(node: string, now: number, pending: Pending[], ids: string[]): string {
    return commitNotice(
      node,
      now,
      pending.map((p, i) => ({
        id: ids[i]!,
        zone: p.event.zone,
        type: p.event.type,
        actor: p.event.actor,
        session_id: p.event.session_id ?? null,
        stream_id: p.event.stream_id ?? null,
        payload: p.payload,
      })),
    );
  }

  /** Keep the previous unit's work and open a fresh savepoint for the next one. */
  private async renewSavepoint(trx: Transaction<Database>): Promise<void> {
    if (this.conn.kind === 'postgres') {
      // No parameters: sent as one simple query, so both statements cost one round trip.
      await sql.raw('release savepoint unit; savepoint unit').execute(trx);
    } else {
      await this.savepoint(trx, 'release savepoint unit');
      await this.savepoint(trx, 'savepoint unit');
    }
  }

  /** A savepoint statement: on SQLite straight on the writer's connection (see `SqliteDirect`). */
  private async savepoint(trx: Transaction<Database>, statement: string): Promise<void> {
    if (this.conn.direct) this.conn.direct.run(statement, []);
    else await sql.raw(statement).execute(trx);
  }

  private publish(events: LogEvent[]): void {
    if (events.length === 0) return;
    for (const l of this.listeners) this.runSafely(() => l(events));
    if (!this.orderedFanOut) for (const l of this.anyListeners) this.runSafely(() => l(events));
  }

  private runSafely(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      // A listener's bug must not un-commit a batch or stall the writer.
      this.log.error({ err: error }, 'post-commit listener failed');
    }
  }
}
