import type { Kysely } from 'kysely';
import { parseJson } from '../util/json.ts';
import type { LogEvent } from './events.ts';
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
  constructor(private readonly db: Kysely<Database>) {}

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
    let query = this.db.selectFrom('events').selectAll().where('seq', '>', after);
    if (opts.zone !== undefined) query = query.where('zone', '=', opts.zone);
    const rows = await query
      .orderBy('seq', 'asc')
      .limit(clampLimit(opts.limit, DEFAULT_SESSION_EVENTS_LIMIT))
      .execute();
    return rows.map(toLogEvent);
  }

  /** Messages on the given streams past a cursor: what an fd still has due. */
  async messagesAfter(streamId: string, after: number, limit = 1000): Promise<LogEvent[]> {
    const rows = await this.db
      .selectFrom('events')
      .selectAll()
      .where('stream_id', '=', streamId)
      .where('type', '=', 'stream.message')
      .where('seq', '>', after)
      .orderBy('seq', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toLogEvent);
  }

  async head(): Promise<number> {
    const row = await this.db.selectFrom('log_head').select('seq').where('id', '=', 1).executeTakeFirst();
    return Number(row?.seq ?? 0);
  }
}
