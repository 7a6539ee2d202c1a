import { type Kysely, sql } from 'kysely';
import type { DialectKind } from '../dialect.ts';

/** The first schema. `kind` decides the few types the two databases spell differently. */
export function initial(kind: DialectKind) {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('zones')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('max_depth', 'integer')
        .addColumn('max_children', 'integer')
        .addColumn('max_sessions', 'integer')
        .execute();

      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('zone', 'text', (c) => c.notNull())
        .addColumn('parent_id', 'text')
        .addColumn('depth', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('end_reason', 'text')
        .addColumn('runtime', 'text', (c) => c.notNull())
        .addColumn('runner', 'text', (c) => c.notNull())
        .addColumn('title', 'text')
        .addColumn('spec', 'text', (c) => c.notNull())
        .addColumn('runtime_state', 'text')
        .addColumn('parent_close', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text')
        .addColumn('idempotency_key', 'text')
        .addColumn('last_message', 'text')
        .addColumn('suspend_reason', 'text')
        .addColumn('term_deadline', big)
        .addColumn('expires_at', big)
        .addColumn('max_turns', 'integer')
        .addColumn('turns', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('usage', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .addColumn('ended_at', big)
        .execute();
      await db.schema
        .createIndex('sessions_zone_status')
        .on('sessions')
        .columns(['zone', 'status'])
        .execute();
      await db.schema.createIndex('sessions_parent').on('sessions').column('parent_id').execute();
      await db.schema
        .createIndex('sessions_idempotency')
        .on('sessions')
        .columns(['zone', 'idempotency_key'])
        .unique()
        .where(sql.ref('idempotency_key'), 'is not', null)
        .execute();

      await db.schema
        .createTable('streams')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('zone', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text')
        .addColumn('self_echo', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('closed_at', big)
        .execute();
      // Names are unique among the streams that are open; a closed room's name can be used again.
      await db.schema
        .createIndex('streams_zone_name_open')
        .on('streams')
        .columns(['zone', 'name'])
        .unique()
        .where(sql.ref('closed_at'), 'is', null)
        .execute();

      await db.schema
        .createTable('fds')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('zone', 'text', (c) => c.notNull())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('num', 'integer', (c) => c.notNull())
        .addColumn('stream_id', 'text', (c) => c.notNull())
        .addColumn('perm', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('cursor', big, (c) => c.notNull().defaultTo(0))
        .addColumn('owned', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('spawned', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('closed_at', big)
        .execute();
      await db.schema
        .createIndex('fds_holder_num')
        .on('fds')
        .columns(['zone', 'holder', 'num'])
        .unique()
        .execute();
      await db.schema.createIndex('fds_stream').on('fds').columns(['stream_id', 'closed_at']).execute();

      await db.schema
        .createTable('events')
        .addColumn('seq', big, (c) => c.primaryKey())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('zone', 'text', (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text')
        .addColumn('stream_id', 'text')
        .addColumn('payload', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_session_seq').on('events').columns(['session_id', 'seq']).execute();
      await db.schema.createIndex('events_stream_seq').on('events').columns(['stream_id', 'seq']).execute();
      await db.schema.createIndex('events_type_seq').on('events').columns(['type', 'seq']).execute();
      await db.schema.createIndex('events_ts').on('events').column('ts').execute();

      await db.schema
        .createTable('log_head')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('seq', big, (c) => c.notNull())
        .execute();
      await db
        .insertInto('log_head' as never)
        .values({ id: 1, seq: 0 } as never)
        .execute();

      await db.schema
        .createTable('operator_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('revoked_at', big)
        .execute();

      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
