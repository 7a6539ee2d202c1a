import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectKind } from '../../store/dialect.ts';
import { renameOld } from '../../store/renames.ts';

/**
 * The scheduling plugin's tables: its schedules and the log of their fires. `001_schedules`
 * makes them under their current names (indexes keep the names they always had); a database
 * made before `002_prefixed_tables` holds their first names, and 002 renames them there.
 */
export function schedulingMigrations(kind: DialectKind): Record<string, Migration> {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    '001_schedules': {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('scheduling_schedules')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('cron', 'text')
          .addColumn('tz', 'text')
          .addColumn('interval_ms', big)
          .addColumn('at', big)
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('next_fire_at', big)
          .addColumn('missed', 'text', (c) => c.notNull())
          .addColumn('missed_cap', 'integer', (c) => c.notNull())
          .addColumn('overlap', 'text', (c) => c.notNull())
          .addColumn('owner', 'text', (c) => c.notNull())
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('updated_at', big, (c) => c.notNull())
          .addColumn('fires', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('last_fire_at', big)
          .addColumn('last_fire_id', 'text')
          .addColumn('last_outcome', 'text')
          .execute();
        // The firing pass and the timer select the earliest due enabled schedules.
        await db.schema
          .createIndex('schedules_due')
          .on('scheduling_schedules')
          .columns(['enabled', 'next_fire_at'])
          .execute();
        await db.schema
          .createIndex('schedules_zone_id')
          .on('scheduling_schedules')
          .columns(['zone', 'id'])
          .execute();
        await db.schema
          .createTable('scheduling_fires')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('schedule_id', 'text', (c) => c.notNull())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('due_at', big, (c) => c.notNull())
          .addColumn('fired_at', big, (c) => c.notNull())
          .addColumn('manual', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('target', 'text')
          .addColumn('error', 'text')
          .addColumn('node', 'text')
          .addColumn('claimed_at', big)
          .addColumn('finished_at', big)
          .execute();
        // The last line of defence against a double fire: one row per schedule and due time,
        // whatever servers race (run-now fires are manual and may share a millisecond).
        await sql`create unique index schedule_fires_once on scheduling_fires (schedule_id, due_at) where manual = 0`.execute(
          db,
        );
        await db.schema
          .createIndex('schedule_fires_schedule')
          .on('scheduling_fires')
          .columns(['schedule_id', 'status'])
          .execute();
        await db.schema
          .createIndex('schedule_fires_status')
          .on('scheduling_fires')
          .column('status')
          .execute();
      },
    },
    // A plugin's tables carry its name: renamed in place, rows and indexes kept.
    '002_prefixed_tables': {
      async up(db: Kysely<unknown>): Promise<void> {
        await renameOld(db, kind, [
          ['schedules', 'scheduling_schedules'],
          ['schedule_fires', 'scheduling_fires'],
        ]);
      },
    },
  };
}
