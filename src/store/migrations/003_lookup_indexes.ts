import { type Kysely, sql } from 'kysely';

/**
 * Indexes for the lookups of spawn, kill and reaping, so they cost what is live rather than
 * everything that ever ran: streams by owner and by session, a holder's open fds, a
 * parent's children by status.
 */
export const lookupIndexes = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex('streams_owner_open')
      .on('streams')
      .column('owner')
      .where(sql.ref('closed_at'), 'is', null)
      .execute();
    await db.schema.createIndex('streams_session').on('streams').column('session_id').execute();
    await db.schema
      .createIndex('fds_holder_open')
      .on('fds')
      .column('holder')
      .where(sql.ref('closed_at'), 'is', null)
      .execute();
    await db.schema
      .createIndex('sessions_parent_status')
      .on('sessions')
      .columns(['parent_id', 'status'])
      .execute();
  },
};
