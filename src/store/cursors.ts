import { CompiledQuery } from 'kysely';
import type { DialectKind } from './dialect.ts';
import type { WriteTx } from './writer.ts';

/** Cursor updates: only ever forward (`cursor < new`), like the rows they mirror. */
const SQLITE_FLUSH_SQL = 'update "fds" set "cursor" = ? where "id" = ? and "cursor" < ?';
const PG_FLUSH_SQL =
  'update "fds" set "cursor" = "v"."cursor" from (select unnest($1::text[]) as "id", unnest($2::bigint[]) as "cursor") as "v" where "fds"."id" = "v"."id" and "fds"."cursor" < "v"."cursor"';
/** Rows per PostgreSQL flush statement. */
const FLUSH_CHUNK = 1000;

export interface CursorUpdate {
  id: string;
  cursor: number;
}

/**
 * Persist acknowledged fd cursors inside a write unit. On the writer's path every flush
 * interval with one row per active subscriber, so fixed SQL text (prepared once) instead
 * of the query builder; on PostgreSQL one statement per chunk instead of a round trip per fd.
 */
export async function flushCursors(tx: WriteTx, updates: readonly CursorUpdate[]): Promise<void> {
  if (tx.kind === 'postgres') {
    for (const q of flushCursorsStatements(tx.kind, updates)) await tx.db.executeQuery(q);
    return;
  }
  // SQLite: straight on the writer's connection (`tx.run`), without the builder's async hop per fd.
  for (const u of updates) await tx.run(SQLITE_FLUSH_SQL, [u.cursor, u.id, u.cursor]);
}

/** The statements of one flush: on SQLite one per fd, on PostgreSQL one per chunk of fds. */
export function flushCursorsStatements(kind: DialectKind, updates: readonly CursorUpdate[]): CompiledQuery[] {
  const out: CompiledQuery[] = [];
  if (kind === 'postgres') {
    for (let i = 0; i < updates.length; i += FLUSH_CHUNK) {
      const chunk = updates.slice(i, i + FLUSH_CHUNK);
      out.push(CompiledQuery.raw(PG_FLUSH_SQL, [chunk.map((u) => u.id), chunk.map((u) => u.cursor)]));
    }
  } else {
    for (const u of updates) out.push(CompiledQuery.raw(SQLITE_FLUSH_SQL, [u.cursor, u.id, u.cursor]));
  }
  return out;
}
