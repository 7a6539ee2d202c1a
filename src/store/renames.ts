import { type Kysely, sql } from 'kysely';
import type { DialectKind } from './dialect.ts';

/**
 * Tables renamed by a migration, for the migrations around the rename. A plugin's first
 * migration makes its tables under their current names, so a fresh database never pays for a
 * rename (on SQLite each one rewrites the schema, and a full-text table has to be rebuilt);
 * a database made before the rename still holds the first names, and the rename migration
 * renames what it finds there. Every function here runs inside a migration (`db` is its
 * transaction).
 */

/** Which of `names` are tables of this database (of its schema, on PostgreSQL). */
export async function existingTables(
  db: Kysely<unknown>,
  kind: DialectKind,
  names: readonly string[],
): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const list = sql.join(names.map((n) => sql`${n}`));
  const rows =
    kind === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master
          where type = 'table' and name in (${list})`.execute(db)
      : await sql<{ name: string }>`select tablename as name from pg_catalog.pg_tables
          where schemaname = current_schema() and tablename in (${list})`.execute(db);
  return new Set(rows.rows.map((r) => r.name));
}

/** Renames each `[from, to]` whose `from` is a table here; the `from`s it renamed. */
export async function renameOld(
  db: Kysely<unknown>,
  kind: DialectKind,
  pairs: ReadonlyArray<readonly [from: string, to: string]>,
): Promise<string[]> {
  const old = await existingTables(
    db,
    kind,
    pairs.map(([from]) => from),
  );
  const renamed: string[] = [];
  for (const [from, to] of pairs) {
    if (!old.has(from)) continue;
    await db.schema.alterTable(from).renameTo(to).execute();
    renamed.push(from);
  }
  return renamed;
}

/**
 * The name a table has here in a migration that runs before its rename: `from` on a database
 * made before the rename's time, `to` on one whose first migration made it so.
 */
export async function nameBeforeRename(
  db: Kysely<unknown>,
  kind: DialectKind,
  [from, to]: readonly [from: string, to: string],
): Promise<string> {
  return (await existingTables(db, kind, [from])).has(from) ? from : to;
}
