import { type Kysely, type MigrationProvider, Migrator, sql } from 'kysely';
import type { Connections } from './dialect.ts';

/**
 * Bring one migration set (core's, or a plugin's, each with its own history table) up to date.
 * Kysely's migrator takes a database-wide lock and checks its tables each time; a warren that
 * is already current (every reopen, every node after the first) reads its history table once
 * instead and skips all that. Anything pending, missing or unexpected goes through the
 * migrator, which applies it under its lock (two servers opening one schema at once) or says
 * what is wrong.
 */
export async function migrate(conn: Connections, provider: MigrationProvider, table?: string): Promise<void> {
  // Kysely's Migrator, given no schema, takes a `kysely_migration` table in ANY schema of the
  // database as its own; with one schema per node or per test it would then skip creating
  // its tables here and fail. Pin it to the schema this connection lives in.
  const migrationTableSchema =
    conn.kind === 'postgres'
      ? ((await sql<{ schema: string | null }>`select current_schema() as schema`.execute(conn.writer))
          .rows[0]?.schema ?? undefined)
      : undefined;
  const historyTable = table ?? 'kysely_migration';
  const names = Object.keys(await provider.getMigrations());
  if (await upToDate(conn.writer, names, historyTable, migrationTableSchema)) return;
  const migrator = new Migrator({
    db: conn.writer,
    provider,
    migrationTableSchema,
    ...(table ? { migrationTableName: table, migrationLockTableName: `${table}_lock` } : {}),
  });
  let { error, results } = await migrator.migrateToLatest();
  // A schema (or a table in one) that another node or test drops in the instant of a catalog
  // read can fail it ("schema … does not exist", "column … of relation … does not exist")
  // though it says nothing about ours. Such a race — a failure before any migration ran — is
  // retried; anything else is not. With a pause that grows: several schemas go in one burst.
  for (let retry = 0; retry < 8 && error && catalogRace(error, results, migrationTableSchema); retry++) {
    await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** retry));
    ({ error, results } = await migrator.migrateToLatest());
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message ?? String(error)}`);
  }
}

/** True when the history table holds exactly these migrations (no table: a fresh store). */
async function upToDate(
  // biome-ignore lint/suspicious/noExplicitAny: the history table is Kysely's, not in warren's schema type
  db: Kysely<any>,
  names: string[],
  table: string,
  schema: string | undefined,
): Promise<boolean> {
  const exists =
    schema === undefined
      ? (
          await sql<{
            n: number;
          }>`select count(*) as n from sqlite_master where type = 'table' and name = ${table}`.execute(db)
        ).rows[0]?.n
      : (await sql<{ t: string | null }>`select to_regclass(${`"${schema}"."${table}"`}) as t`.execute(db))
          .rows[0]?.t;
  if (!exists) return false;
  const ref = schema === undefined ? sql.table(table) : sql.table(`${schema}.${table}`);
  const done = new Set(
    (await sql<{ name: string }>`select name from ${ref}`.execute(db)).rows.map((r) => r.name),
  );
  return done.size === names.length && names.every((n) => done.has(n));
}

function catalogRace(
  error: unknown,
  results: readonly { status: string }[] | undefined,
  ours: string | undefined,
): boolean {
  const message = (error as Error)?.message ?? '';
  const schema = /schema "([^"]+)" does not exist/.exec(message);
  if (schema) return schema[1] !== ours;
  const ranOne = results?.some((r) => r.status === 'Error') ?? false;
  return !ranOne && / does not exist/.test(message);
}
