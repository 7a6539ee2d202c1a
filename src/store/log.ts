import type { Kysely } from 'kysely';
import { parseJson } from '../util/json.ts';
import type { LogEvent } from './events.ts';
import type { NamedStatements } from './pg-named.ts';
import type { Database, EventsTable } from './schema.ts';

export const DEFAULT_SESSION_EVENTS_LIMIT = 500;
export const DEFAULT_EVENTS_LIMIT = 100;
export const DEFAULT_TRANSCRIPT_LIMIT = 100;
export const MAX_READ_LIMIT = 10_000;

export interface EventQuery {
  zone?: string;
  type?: string;
  /** Only this session's events (`session_id`). */
  session?: string;
  /** Only this stream's events (`stream_id`). */
  stream?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, inclusive. */
  until?: number;
  /** Only events with a smaller seq: pages backwards. */
  before?: number;
  /** Only events with a larger seq, oldest first: a forward cursor (resume from the last seq seen). */
  after?: number;
  limit?: number;
}

const clampLimit = (limit: number | undefined, fallback: number) =>
  Math.max(1, Math.min(MAX_READ_LIMIT, limit ?? fallback));

export const toLogEvent = (row: EventsTable): LogEvent => ({
  seq: Number(row.seq),
  id: row.id,
  zone: row.zone,
  ts: Number(row.ts),
  type: row.type,
  actor: row.actor,
  session_id: row.session_id,
  stream_id: row.stream_id,
  payload: parseJson<Record<string, unknown>>(row.payload, {}),
});

/** Reads of the action log by cursor. Every view (session, stream, type) is a query on one table. */
export class LogReader {
  /**
   * `named` (PostgreSQL): the hot reads' texts, fixed whatever their values, are registered
   * there, so they run as prepared statements instead of being planned at every call: a
   * read at a cursor (every `ipc_read`, every backlog), the cluster's tail, the head.
   */
  constructor(
    private readonly db: Kysely<Database>,
    named?: NamedStatements,
  ) {
    if (!named) return;
    for (const q of [
      this.messagesAfterQuery('', 0, 1),
      this.tailQuery(0, 1, undefined),
      this.tailQuery(0, 1, ''),
      this.headQuery(),
    ])
      named.add(q.compile().sql);
  }

  /** One session's events, oldest first (replay order), after `from`. */
  async sessionEvents(sessionId: string, opts: { from?: number; limit?: number } = {}): Promise<LogEvent[]> {
    const rows = await this.db
      .selectFrom('events')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('seq', '>', opts.from ?? 0)
      .orderBy('seq', 'asc')
      .limit(clampLimit(opts.limit, DEFAULT_SESSION_EVENTS_LIMIT))
      .execute();
    return rows.map(toLogEvent);
  }

  /** All events, most recent first. */
  async events(q: EventQuery = {}): Promise<LogEvent[]> {
    let query = this.db.selectFrom('events').selectAll();
    if (q.zone !== undefined) query = query.where('zone', '=', q.zone);
    if (q.type !== undefined) query = query.where('type', '=', q.type);
    if (q.session !== undefined) query = query.where('session_id', '=', q.session);
    if (q.stream !== undefined) query = query.where('stream_id', '=', q.stream);
    if (q.since !== undefined) query = query.where('ts', '>=', q.since);
    if (q.until !== undefined) query = query.where('ts', '<=', q.until);
    if (q.before !== undefined) query = query.where('seq', '<', q.before);
    if (q.after !== undefined) query = query.where('seq', '>', q.after);
    const rows = await query
      .orderBy('seq', q.after !== undefined ? 'asc' : 'desc')
      .limit(clampLimit(q.limit, DEFAULT_EVENTS_LIMIT))
      .execute();
    return rows.map(toLogEvent);
  }

  /** A stream's messages, most recent first. */
  async transcript(streamId: string, opts: { before?: number; limit?: number } = {}): Promise<LogEvent[]> {
    let query = this.db
      .selectFrom('events')
      .selectAll()
      .where('stream_id', '=', streamId)
      .where('type', '=', 'stream.message');
    if (opts.before !== undefined) query = query.where('seq', '<', opts.before);
    const rows = await query
      .orderBy('seq', 'desc')
      .limit(clampLimit(opts.limit, DEFAULT_TRANSCRIPT_LIMIT))
      .execute();
    return rows.map(toLogEvent);
  }

  /** Everything after `after`, oldest first: replay, live-stream catch-up. */
  async tail(after: number, opts: { limit?: number; zone?: string } = {}): Promise<LogEvent[]> {
    const rows = await this.tailQuery(
      after,
      clampLimit(opts.limit, DEFAULT_SESSION_EVENTS_LIMIT),
      opts.zone,
    ).execute();
    return rows.map(toLogEvent);
  }

  private tailQuery(after: number, limit: number, zone: string | undefined) {
    let query = this.db.selectFrom('events').selectAll().where('seq', '>', after);
    if (zone !== undefined) query = query.where('zone', '=', zone);
    return query.orderBy('seq', 'asc').limit(limit);
  }

  /** Messages on the given streams past a cursor: what an fd still has due. */
  async messagesAfter(streamId: string, after: number, limit = 1000): Promise<LogEvent[]> {
    const rows = await this.messagesAfterQuery(streamId, after, limit).execute();
    return rows.map(toLogEvent);
  }

  private messagesAfterQuery(streamId: string, after: number, limit: number) {
    return this.db
      .selectFrom('events')
      .selectAll()
      .where('stream_id', '=', streamId)
      .where('type', '=', 'stream.message')
      .where('seq', '>', after)
      .orderBy('seq', 'asc')
      .limit(limit);
  }

  async head(): Promise<number> {
    const row = await this.headQuery().executeTakeFirst();
    return Number(row?.seq ?? 0);
  }

  private headQuery() {
    return this.db.selectFrom('log_head').select('seq').where('id', '=', 1);
  }
}
