import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import type { Clock } from '../util/clock.ts';
import type { IdGenerator } from '../util/ids.ts';
import type { Connections, DialectKind } from './dialect.ts';
import { EventRef, type LogEvent, type NewEvent } from './events.ts';
import type { Database } from './schema.ts';

/** What a unit of work sees: the open transaction and the log to append to. */
export interface WriteTx {
  readonly db: Transaction<Database> | Kysely<Database>;
  readonly kind: DialectKind;
  /** The time of this batch: one clock reading for every row it writes. */
  readonly now: number;
  append(event: NewEvent): EventRef;
  /** Runs once the batch is durable, before the caller's promise resolves. */
  afterCommit(fn: () => void): void;
}

export type CommitListener = (events: readonly LogEvent[]) => void;

interface Unit {
  fn: (tx: WriteTx) => Promise<unknown>;
  /** A unit that only appends cannot fail halfway, so it needs no savepoint. */
  appendOnly: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

interface Pending {
  event: NewEvent;
  ref: EventRef;
  payload: string;
}

/** Rows per multi-row insert on PostgreSQL (x 9 parameters, well under its 65 535). */
const INSERT_CHUNK = 500;

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

/** `insert into events (...) values (...), ...` for `rows` rows, in the dialect's placeholders. */
function insertEventsSql(kind: DialectKind, rows: number): string {
  const width = EVENT_COLUMNS.length;
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const marks = EVENT_COLUMNS.map((_, c) => (kind === 'postgres' ? `$${r * width + c + 1}` : '?'));
    tuples.push(`(${marks.join(', ')})`);
  }
  return `insert into "events" (${EVENT_COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${tuples.join(', ')}`;
}

/**
 * The only path that writes. Units queue up; whatever is queued when the writer is free
 * becomes one transaction (group commit), each unit inside its own savepoint so one
 * failure does not sink its neighbours. Seqs are taken from `log_head` at the end of the
 * transaction, under its row lock, so seq order is commit order and has no gaps.
 */
export class GroupCommitWriter {
  private queue: Unit[] = [];
  private running = false;
  private closed = false;
  private listeners = new Set<CommitListener>();
  private idle: Array<() => void> = [];
  /** Insert statements by row count, built once each. */
  private insertSql = new Map<number, string>();

  constructor(
    private readonly conn: Connections,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly maxBatch = 1024,
  ) {}

  write<R>(fn: (tx: WriteTx) => Promise<R>, opts: { appendOnly?: boolean } = {}): Promise<R> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return new Promise<R>((resolve, reject) => {
      this.queue.push({
        fn,
        appendOnly: opts.appendOnly ?? false,
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
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      await this.runBatch(batch);
    }
    this.running = false;
    for (const r of this.idle.splice(0)) r();
  }

  private async runBatch(batch: Unit[]): Promise<void> {
    const now = this.clock.now();
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const pending: Pending[] = [];
    const after: Array<() => void> = [];
    let trx: Awaited<ReturnType<ReturnType<Kysely<Database>['startTransaction']>['execute']>> | undefined;
    try {
      trx = await this.conn.writer.startTransaction().execute();
      // Savepoints keep a failing unit from sinking its neighbours. A batch of one has no
      // neighbour: if its unit fails, the whole transaction (all it wrote) is rolled back
      // and the unit rejected with its own error, below, so it needs none.
      const isolate = batch.length > 1;
      // After a unit succeeds its savepoint is left open ('dirty') and released only when
      // the next unit needs a fresh one (one round trip on PostgreSQL) or by the commit.
      // After a unit fails, `rollback to` leaves the savepoint in place, ready for reuse.
      let savepoint: 'none' | 'clean' | 'dirty' = 'none';
      for (const unit of batch) {
        const mark = pending.length;
        const markAfter = after.length;
        const tx: WriteTx = {
          db: trx,
          kind: this.conn.kind,
          now,
          append: (event) => {
            // A malformed event fails its own unit here, instead of the whole batch at insert.
            if (
              typeof event.zone !== 'string' ||
              typeof event.type !== 'string' ||
              typeof event.actor !== 'string'
            ) {
              throw new TypeError(
                `an event needs a string zone, type and actor (type: ${String(event.type)})`,
              );
            }
            const ref = new EventRef();
            pending.push({ event, ref, payload: JSON.stringify(event.payload ?? {}) });
            return ref;
          },
          afterCommit: (fn) => after.push(fn),
        };
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
        if (!isolate) {
          // Alone in the batch: a throw goes to the catch below, which rolls back and rejects it.
          outcomes.push({ ok: true, value: await unit.fn(tx) });
          continue;
        }
        if (savepoint === 'none') await sql`savepoint unit`.execute(trx);
        else if (savepoint === 'dirty') await this.renewSavepoint(trx);
        savepoint = 'clean';
        try {
          const value = await unit.fn(tx);
          savepoint = 'dirty';
          outcomes.push({ ok: true, value });
        } catch (error) {
          await sql`rollback to savepoint unit`.execute(trx);
          pending.length = mark;
          after.length = markAfter;
          outcomes.push({ ok: false, error });
        }
      }
      const committed = await this.sequence(trx, pending, now);
      await trx.commit().execute();
      trx = undefined;
      this.publish(committed);
      for (const fn of after) runSafely(fn);
      batch.forEach((unit, i) => {
        const o = outcomes[i]!;
        if (o.ok) unit.resolve(o.value);
        else unit.reject(o.error);
      });
    } catch (error) {
      if (trx)
        await trx
          .rollback()
          .execute()
          .catch(() => {});
      for (const unit of batch) unit.reject(error);
    }
  }

  /** Take `n` seqs under the log_head row lock, then insert the rows. */
  private async sequence(trx: Transaction<Database>, pending: Pending[], now: number): Promise<LogEvent[]> {
    if (pending.length === 0) return [];
    const head = await sql<{
      seq: number;
    }>`update log_head set seq = seq + ${pending.length} where id = 1 returning seq`.execute(trx);
    const last = Number(head.rows[0]!.seq);
    let seq = last - pending.length;
    const events: LogEvent[] = new Array(pending.length);
    const params: unknown[] = new Array(pending.length * EVENT_COLUMNS.length);
    for (let i = 0; i < pending.length; i++) {
      const p = pending[i]!;
      seq += 1;
      const id = this.ids.event();
      p.ref.seq = seq;
      p.ref.id = id;
      p.ref.ts = now;
      const e = p.event;
      const session = e.session_id ?? null;
      const stream = e.stream_id ?? null;
      const o = i * EVENT_COLUMNS.length;
      params[o] = seq;
      params[o + 1] = id;
      params[o + 2] = e.zone;
      params[o + 3] = now;
      params[o + 4] = e.type;
      params[o + 5] = e.actor;
      params[o + 6] = session;
      params[o + 7] = stream;
      params[o + 8] = p.payload;
      events[i] = {
        seq,
        id,
        zone: e.zone,
        ts: now,
        type: e.type,
        actor: e.actor,
        session_id: session,
        stream_id: stream,
        payload: e.payload ?? {},
      };
    }
    // The hottest statement in the kernel, so it skips the query builder: fixed SQL text
    // (prepared once, kept by the dialect's statement cache) and positional parameters.
    // SQLite runs a prepared one-row insert faster than a multi-row VALUES (measured ~1.4x);
    // PostgreSQL wants few round trips, so it gets multi-row chunks.
    const width = EVENT_COLUMNS.length;
    if (this.conn.kind === 'sqlite') {
      const text = this.insertText(1);
      for (let i = 0; i < pending.length; i++) {
        await trx.executeQuery(CompiledQuery.raw(text, params.slice(i * width, (i + 1) * width)));
      }
    } else {
      for (let i = 0; i < pending.length; i += INSERT_CHUNK) {
        const n = Math.min(INSERT_CHUNK, pending.length - i);
        const text = this.insertText(n);
        await trx.executeQuery(CompiledQuery.raw(text, params.slice(i * width, (i + n) * width)));
      }
    }
    return events;
  }

  /** Keep the previous unit's work and open a fresh savepoint for the next one. */
  private async renewSavepoint(trx: Transaction<Database>): Promise<void> {
    if (this.conn.kind === 'postgres') {
      // No parameters: sent as one simple query, so both statements cost one round trip.
      await sql.raw('release savepoint unit; savepoint unit').execute(trx);
    } else {
      await sql`release savepoint unit`.execute(trx);
      await sql`savepoint unit`.execute(trx);
    }
  }

  private insertText(rows: number): string {
    let text = this.insertSql.get(rows);
    if (text === undefined) {
      text = insertEventsSql(this.conn.kind, rows);
      this.insertSql.set(rows, text);
    }
    return text;
  }

  private publish(events: LogEvent[]): void {
    if (events.length === 0) return;
    for (const l of this.listeners) runSafely(() => l(events));
  }
}

function runSafely(fn: () => void): void {
  try {
    fn();
  } catch (error) {
    // A listener's bug must not un-commit a batch or stall the writer.
    console.error('warren: post-commit listener failed:', error);
  }
}
