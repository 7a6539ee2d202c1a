import type { Kysely, Migration } from 'kysely';
import type { DialectKind } from '../../store/dialect.ts';
import { renameOld } from '../../store/renames.ts';

/**
 * The turns plugin's tables: bridge sessions, turns, questions, reports. `001_turns` makes
 * them under their current names (indexes keep the names they always had); a database made
 * before `002_plugin_prefix` holds three of them under other names, and 002 renames them there.
 */
export function turnsMigrations(kind: DialectKind): Record<string, Migration> {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    '001_turns': {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('turns_sessions')
          .addColumn('session_id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('profile', 'text', (c) => c.notNull())
          .addColumn('repo', 'text', (c) => c.notNull())
          .addColumn('cwd', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('mode', 'text', (c) => c.notNull())
          .addColumn('tmux_target', 'text')
          .addColumn('worktree', 'text')
          .addColumn('project', 'text')
          .addColumn('worktree_policy', 'text')
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .execute();
        // Enumeration is always by namespace.
        await db.schema
          .createIndex('coord_sessions_ns')
          .on('turns_sessions')
          .columns(['zone', 'profile', 'repo', 'session_id'])
          .execute();
        await db.schema
          .createTable('turns')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('session_id', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('prompt', 'text', (c) => c.notNull())
          .addColumn('workflow', 'text')
          .addColumn('final_text', 'text')
          .addColumn('final_format', 'text')
          .addColumn('final_source', 'text')
          .addColumn('final_artifact', 'text')
          .addColumn('final_truncated', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('evidence', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('error', 'text')
          .addColumn('blocker', 'text')
          .addColumn('superseded_by', 'text')
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('started_at', big)
          .addColumn('ended_at', big)
          .execute();
        // The active turn and the queue of a session; the live ones after a restart.
        await db.schema
          .createIndex('turns_session')
          .on('turns')
          .columns(['session_id', 'status', 'id'])
          .execute();
        await db.schema.createIndex('turns_status').on('turns').columns(['status']).execute();
        await db.schema
          .createTable('turns_questions')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('session_id', 'text', (c) => c.notNull())
          .addColumn('turn_id', 'text')
          .addColumn('text', 'text', (c) => c.notNull())
          .addColumn('options', 'text')
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('answer', 'text')
          .addColumn('answered_by', 'text')
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('answered_at', big)
          .execute();
        await db.schema
          .createIndex('turn_questions_session')
          .on('turns_questions')
          .columns(['session_id', 'status', 'id'])
          .execute();
        await db.schema
          .createTable('turns_reports')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('session_id', 'text', (c) => c.notNull())
          .addColumn('turn_id', 'text')
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('summary', 'text', (c) => c.notNull())
          .addColumn('blocker', 'text')
          .addColumn('evidence', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('turn_reports_session')
          .on('turns_reports')
          .columns(['session_id', 'id'])
          .execute();
      },
    },
    // Tables are named for their plugin (`turns`, `turns_…`): `coord_sessions` read as the
    // coordinator plugin's. Renamed in place, rows and indexes kept (no migration or query
    // names an index, so theirs stay as created).
    '002_plugin_prefix': {
      async up(db: Kysely<unknown>): Promise<void> {
        await renameOld(db, kind, [
          ['coord_sessions', 'turns_sessions'],
          ['turn_questions', 'turns_questions'],
          ['turn_reports', 'turns_reports'],
        ]);
      },
    },
  };
}
