import { type Kysely, sql } from 'kysely';
import type { DialectKind } from '../dialect.ts';

/**
 * Why a session ended and what it is doing now, readable without the log; the agent
 * processes each node runs, so a restarted node can end the ones a crashed run left behind.
 */
export function sessionHardening(kind: DialectKind) {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('sessions').addColumn('end_detail', 'text').execute();
      await db.schema.alterTable('sessions').addColumn('activity', 'text').execute();
      await db.schema
        .createTable('agent_procs')
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('pid', 'integer', (c) => c.notNull())
        .addColumn('pgid', 'integer', (c) => c.notNull())
        .addColumn('start_time', 'text')
        .addColumn('boot_id', 'text')
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('started_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_procs_pk', ['session_id', 'pid'])
        .execute();
      await db.schema.createIndex('agent_procs_run').on('agent_procs').column('run_id').execute();
      await db.schema.createIndex('sessions_ended').on('sessions').columns(['status', 'ended_at']).execute();
      await db.schema.createIndex('streams_closed').on('streams').column('closed_at').execute();
      // Spawn counts live sessions per zone and per parent: an index of live rows only, so the
      // count costs what is live, not everything that ever ran.
      await db.schema
        .createIndex('sessions_live')
        .on('sessions')
        .columns(['zone', 'parent_id'])
        .where(sql.ref('status'), '!=', 'stopped')
        .execute();
    },
  };
}
