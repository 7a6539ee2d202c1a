import { sql } from 'kysely';
import type { PluginTables } from '../../contract/plugin.ts';

/**
 * Run `fn` on at most one server process at a time: on PostgreSQL under a session-level
 * advisory try-lock held on one reserved connection for the run (released at the end, or
 * by PostgreSQL itself if the process dies); the key names this schema and the worker, so
 * warrens sharing a database do not exclude each other. SQLite has one process per file.
 * Returns false when another process holds it (this run is skipped).
 */
export async function exclusive<DB>(
  tables: Pick<PluginTables<DB>, 'kind' | 'reader'>,
  name: string,
  fn: () => Promise<void>,
): Promise<boolean> {
  if (tables.kind !== 'postgres') {
    await fn();
    return true;
  }
  return tables.reader.connection().execute(async (conn) => {
    const key = sql`hashtextextended(current_schema() || ':coordinator:' || ${name}, 0)`;
    const got = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${key}) as ok`.execute(conn);
    if (!got.rows[0]?.ok) return false;
    try {
      await fn();
      return true;
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(conn);
    }
  });
}
