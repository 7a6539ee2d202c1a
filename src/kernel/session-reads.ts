import { parseJson } from '../util/json.ts';
import type { Db } from './lookup.ts';

/**
 * Narrow reads of sessions for the code above the kernel (plugins never query its tables):
 * each answers one question with just what its caller needs, never a row.
 */

/** Which of `ids` name sessions that have stopped (ids of no session are left out). */
export async function stoppedAmong(db: Db, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('sessions')
    .select('id')
    .where('id', 'in', [...ids])
    .where('status', '=', 'stopped')
    .execute();
  return rows.map((r) => r.id);
}

/** The working directory a session was spawned with (its spec's), or null: none given, or no such session. */
export async function sessionCwd(db: Db, id: string): Promise<string | null> {
  const row = await db.selectFrom('sessions').select('spec').where('id', '=', id).executeTakeFirst();
  const cwd = row ? parseJson<{ cwd?: unknown }>(row.spec, {}).cwd : undefined;
  return typeof cwd === 'string' ? cwd : null;
}
