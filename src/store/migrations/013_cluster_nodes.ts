import type { Kysely } from 'kysely';
import type { DialectKind } from '../dialect.ts';

/**
 * Several nodes on one database (docs/scaling.md). `nodes`: each server process that joined,
 * its address, the runtimes it can run, its lease and its epoch (bumped at every join: the
 * fencing token). On each session, the node that owns its agent process and that node's epoch
 * when it took it: a node whose epoch moved on (it lost its lease) can no longer write for it.
 * The columns exist on SQLite too (one schema), where a single node owns everything.
 */
export function clusterNodes(kind: DialectKind) {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('nodes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('address', 'text')
        .addColumn('runtimes', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('epoch', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('joined_at', big, (c) => c.notNull())
        .addColumn('heartbeat_at', big, (c) => c.notNull())
        .addColumn('lease_until', big, (c) => c.notNull())
        .execute();
      await db.schema.alterTable('sessions').addColumn('owner_node', 'text').execute();
      await db.schema.alterTable('sessions').addColumn('owner_epoch', 'integer').execute();
      await db.schema
        .createIndex('sessions_owner_node')
        .on('sessions')
        .columns(['owner_node', 'status'])
        .execute();
    },
  };
}
