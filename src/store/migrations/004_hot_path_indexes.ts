import { type Kysely, sql } from 'kysely';

/**
 * Indexes so every hot query has one that fits, whatever the planner's statistics say.
 *
 * Stream reads (`stream_id = ? and type = 'stream.message' and seq > ?`) had only
 * `(stream_id, seq)` and `(type, seq)`, two indexes that looked equally good to SQLite, and
 * it picked the type one: at 1M events a quiet stream's read walked every message in the
 * log. `(stream_id, type, seq)` matches both equalities and the seq order, so it wins
 * outright; it replaces `(stream_id, seq)`, whose every reader also filters on type (and a
 * lookup by `stream_id` alone still uses its prefix), so a commit dirties no more pages.
 * Not a partial index: the kernel binds 'stream.message' as a parameter, and neither
 * planner can match a bound parameter against a partial index's predicate.
 *
 * `(type, seq)` stays: the by-type view of the log (`events --type`) pages on it.
 *
 * The reconcile phases look for sessions by deadline and by status, with no zone: each
 * gets an index, so a tick reads what is due, not every session that ever ran.
 */
export const hotPathIndexes = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex('events_stream_type_seq')
      .on('events')
      .columns(['stream_id', 'type', 'seq'])
      .execute();
    await db.schema.dropIndex('events_stream_seq').execute();
    // Partial: most sessions have neither deadline, and `x <= ?` or `x is not null` both
    // imply the predicate, so every lookup by deadline can use them.
    await db.schema
      .createIndex('sessions_term_deadline')
      .on('sessions')
      .column('term_deadline')
      .where(sql.ref('term_deadline'), 'is not', null)
      .execute();
    await db.schema
      .createIndex('sessions_expires_at')
      .on('sessions')
      .column('expires_at')
      .where(sql.ref('expires_at'), 'is not', null)
      .execute();
    await db.schema.createIndex('sessions_status').on('sessions').columns(['status', 'depth']).execute();
  },
};
