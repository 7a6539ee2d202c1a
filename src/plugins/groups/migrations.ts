import type { Kysely, Migration } from 'kysely';
import type { DialectKind } from '../../store/dialect.ts';
import { renameOld } from '../../store/renames.ts';

/**
 * The groups plugin's tables: groups, routes and the unrouted inbox. `001_groups` makes them
 * under their current names (indexes keep the names they always had); a database made before
 * `002_prefixed_tables` holds their first names, and 002 renames them there.
 */
export function groupsMigrations(kind: DialectKind): Record<string, Migration> {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    '001_groups': {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('groups')
          .addColumn('folder', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('agent', 'text')
          .addColumn('rules', 'text', (c) => c.notNull())
          .addColumn('session_id', 'text')
          .addColumn('last_chat', 'text')
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('updated_at', big, (c) => c.notNull())
          .execute();
        // Session events find their group by session.
        await db.schema.createIndex('groups_session').on('groups').column('session_id').execute();
        await db.schema
          .createTable('groups_routes')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('seq', big, (c) => c.notNull())
          .addColumn('match', 'text', (c) => c.notNull())
          .addColumn('target', 'text', (c) => c.notNull())
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('group_routes_order')
          .on('groups_routes')
          .columns(['zone', 'seq', 'id'])
          .execute();
        await db.schema
          .createTable('groups_unrouted')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('platform', 'text', (c) => c.notNull())
          .addColumn('room', 'text', (c) => c.notNull())
          .addColumn('chat_jid', 'text', (c) => c.notNull())
          .addColumn('sender', 'text', (c) => c.notNull())
          .addColumn('verb', 'text', (c) => c.notNull())
          .addColumn('text', 'text', (c) => c.notNull())
          .addColumn('attachments', 'text', (c) => c.notNull())
          .addColumn('reason', 'text', (c) => c.notNull())
          .addColumn('received_at', big, (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('group_unrouted_zone')
          .on('groups_unrouted')
          .columns(['zone', 'id'])
          .execute();
      },
    },
    // A plugin's tables carry its name: renamed in place, rows and indexes kept.
    '002_prefixed_tables': {
      async up(db: Kysely<unknown>): Promise<void> {
        await renameOld(db, kind, [
          ['group_routes', 'groups_routes'],
          ['group_unrouted', 'groups_unrouted'],
        ]);
      },
    },
  };
}
