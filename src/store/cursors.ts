import { CompiledQuery } from 'kysely';
import type { DialectKind } from './dialect.ts';
import type { WriteTx } from './writer.ts';

/**
 * Cursor updates: only ever forward (`cursor < new`), like the rows they mirror; and in a
 * cluster not for an fd whose holder is a session another node owns (docs/scaling.md): a node
 * that lost a session (paused, partitioned) cannot move its cursors past what the new owner
 * delivered. Operators, init and sessions owned by nobody or by this node (under any of its
 * epochs: a session not yet adopted again after a rejoin is still nobody else's) are moved. A
 * fenced node (epoch 0) does not flush at all (fdtable.ts). On PostgreSQL the holder's row is
 * locked (`for share`), so a takeover committing meanwhile is waited for and seen. Alone
 * (SQLite, a node out of a cluster) the owner is null: no check.
 */
const SQLITE_FLUSH_SQL =
  'update "fds" set "cursor" = ? where "id" = ? and "cursor" < ? and not exists (select 1 from "sessions" "s" where "s"."id" = "fds"."holder" and "s"."owner_node" is not null and "s"."owner_node" <> ?)';
/** Alone (no owner to check): the update alone, as it runs on every flush of every subscriber. */
const SQLITE_FLUSH_ALONE_SQL = 'update "fds" set "cursor" = ? where "id" = ? and "cursor" < ?';
const PG_FLUSH_SQL =
  'update "fds" set "cursor" = "v"."cursor" from (select unnest($1::text[]) as "id", unnest($2::bigint[]) as "cursor") as "v" where "fds"."id" = "v"."id" and "fds"."cursor" < "v"."cursor" and ($3::text is null or coalesce((select "s"."owner_node" is null or "s"."owner_node" = $3 from "sessions" "s" where "s"."id" = "fds"."holder" for share), true))';
/** Rows per PostgreSQL flush statement. */
const FLUSH_CHUNK = 1000;

export interface CursorUpdate {
  id: string;
  cursor: number;
}

/** The node a flush is made by, in a cluster (null alone). */
export interface CursorOwner {
  node: string;
}

/**
 * Persist acknowledged fd cursors inside a write unit. On the writer's path every flush
 * interval with one row per active subscriber, so fixed SQL text (prepared once) instead
 * of the query builder; on PostgreSQL one statement per chunk instead of a round trip per fd.
 */
export async function flushCursors(
  tx: WriteTx,
  updates: readonly CursorUpdate[],
  owner: CursorOwner | null = null,
): Promise<void> {
  if (tx.kind === 'postgres') {
    for (const q of flushCursorsStatements(tx.kind, updates, owner)) await tx.db.executeQuery(q);
    return;
  }
  // SQLite: straight on the writer's connection (`tx.run`), without the builder's async hop per fd.
  for (const u of updates) await tx.run(...sqliteStatement(u, owner));
}

function sqliteStatement(u: CursorUpdate, owner: CursorOwner | null): [string, unknown[]] {
  return owner
    ? [SQLITE_FLUSH_SQL, [u.cursor, u.id, u.cursor, owner.node]]
    : [SQLITE_FLUSH_ALONE_SQL, [u.cursor, u.id, u.cursor]];
}

/** The statements of one flush: on SQLite one per fd, on PostgreSQL one per chunk of fds. */
export function flushCursorsStatements(
  kind: DialectKind,
  updates: readonly CursorUpdate[],
  owner: CursorOwner | null = null,
): CompiledQuery[] {
  const out: CompiledQuery[] = [];
  if (kind === 'postgres') {
    for (let i = 0; i < updates.length; i += FLUSH_CHUNK) {
      const chunk = updates.slice(i, i + FLUSH_CHUNK);
      out.push(
        CompiledQuery.raw(PG_FLUSH_SQL, [
          chunk.map((u) => u.id),
          chunk.map((u) => u.cursor),
          owner?.node ?? null,
        ]),
      );
    }
  } else {
    for (const u of updates) out.push(CompiledQuery.raw(...sqliteStatement(u, owner)));
  }
  return out;
}
