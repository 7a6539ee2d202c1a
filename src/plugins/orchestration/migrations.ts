import type { Kysely, Migration } from 'kysely';
import type { DialectKind } from '../../store/dialect.ts';
import { nameBeforeRename, renameOld } from '../../store/renames.ts';

/** Each table's first name, and the name it carries now: the plugin's own prefix. */
export const ORCHESTRATION_RENAMES = [
  ['tasks', 'orchestration_tasks'],
  ['task_deps', 'orchestration_task_deps'],
  ['escalations', 'orchestration_escalations'],
  ['task_attachments', 'orchestration_task_attachments'],
] as const;

/**
 * The orchestration plugin's tables: tasks, their dependencies, escalations, durable
 * attachments. `001_tasks` makes them under their current names (indexes keep the names they
 * always had); a database made before `003_prefixed_names` holds their first names, and 003
 * renames them there (store/renames.ts).
 */
export function orchestrationMigrations(kind: DialectKind): Record<string, Migration> {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    '001_tasks': {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('orchestration_tasks')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('parent_id', 'text')
          .addColumn('title', 'text', (c) => c.notNull())
          .addColumn('prompt', 'text', (c) => c.notNull())
          .addColumn('persona_id', 'text')
          .addColumn('environment', 'text', (c) => c.notNull().defaultTo('local'))
          .addColumn('spawn', 'text', (c) => c.notNull().defaultTo('{}'))
          .addColumn('budget', 'text')
          .addColumn('review', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('on_failure', 'text', (c) => c.notNull().defaultTo('fail'))
          .addColumn('held', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('session_id', 'text')
          .addColumn('result', 'text')
          .addColumn('reason', 'text')
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('updated_at', big, (c) => c.notNull())
          .addColumn('ended_at', big)
          .execute();
        // Dispatch and listings select by status; SIGCHLD and adoption walk parents; a
        // session's events find their task.
        await db.schema
          .createIndex('tasks_zone_status')
          .on('orchestration_tasks')
          .columns(['zone', 'status'])
          .execute();
        await db.schema.createIndex('tasks_status').on('orchestration_tasks').column('status').execute();
        await db.schema.createIndex('tasks_parent').on('orchestration_tasks').column('parent_id').execute();
        await db.schema.createIndex('tasks_session').on('orchestration_tasks').column('session_id').execute();
        await db.schema
          .createTable('orchestration_task_deps')
          .addColumn('task_id', 'text', (c) => c.notNull())
          .addColumn('depends_on', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('task_deps_pk', ['task_id', 'depends_on'])
          .execute();
        await db.schema
          .createIndex('task_deps_depends_on')
          .on('orchestration_task_deps')
          .column('depends_on')
          .execute();
        await db.schema
          .createTable('orchestration_escalations')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('task_id', 'text', (c) => c.notNull())
          .addColumn('session_id', 'text')
          .addColumn('question', 'text', (c) => c.notNull())
          .addColumn('context', 'text', (c) => c.notNull().defaultTo('{}'))
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('answer', 'text')
          .addColumn('answered_by', 'text')
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('answered_at', big)
          .execute();
        await db.schema
          .createIndex('escalations_zone_status')
          .on('orchestration_escalations')
          .columns(['zone', 'status'])
          .execute();
        await db.schema
          .createIndex('escalations_task')
          .on('orchestration_escalations')
          .column('task_id')
          .execute();
        await db.schema
          .createTable('orchestration_task_attachments')
          .addColumn('task_id', 'text', (c) => c.notNull())
          .addColumn('stream_id', 'text', (c) => c.notNull())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('permission', 'text', (c) => c.notNull())
          .addColumn('mode', 'text', (c) => c.notNull())
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .addPrimaryKeyConstraint('task_attachments_pk', ['task_id', 'stream_id'])
          .execute();
      },
    },
    // The inbox pages by id within a zone (open ones, or all): keyset pages that cost their
    // own size however many escalations a zone holds.
    '002_inbox_paging': {
      async up(db: Kysely<unknown>): Promise<void> {
        const escalations = await nameBeforeRename(db, kind, ['escalations', 'orchestration_escalations']);
        await db.schema
          .createIndex('escalations_zone_status_id')
          .on(escalations)
          .columns(['zone', 'status', 'id'])
          .execute();
        await db.schema.createIndex('escalations_zone_id').on(escalations).columns(['zone', 'id']).execute();
      },
    },
    // Every table carries the plugin's name (`orchestration_…`), as the kernel's and other
    // plugins' tables never do: renamed in place on both backends, rows, keys and indexes
    // kept (the indexes keep their names; nothing names them). A fresh database has them so.
    '003_prefixed_names': {
      async up(db: Kysely<unknown>): Promise<void> {
        await renameOld(db, kind, ORCHESTRATION_RENAMES);
      },
    },
  };
}
