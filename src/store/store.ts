import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type { Clock } from '../util/clock.ts';
import type { IdGenerator } from '../util/ids.ts';
import { type Connections, type DialectKind, openConnections, type StoreLocation } from './dialect.ts';
import { LogReader } from './log.ts';
import { migrations } from './migrations/index.ts';
import { Optimizer } from './optimize.ts';
import type { Database } from './schema.ts';
import { GroupCommitWriter } from './writer.ts';

/** The store: one writer (group commit), readers, the log views, and the migrated schema. */
export class Store {
  readonly kind: DialectKind;
  readonly writer: GroupCommitWriter;
  readonly reader: Kysely<Database>;
  readonly log: LogReader;
  private readonly optimizer: Optimizer;

  private constructor(
    private readonly conn: Connections,
    clock: Clock,
    ids: IdGenerator,
  ) {
    this.kind = conn.kind;
    this.writer = new GroupCommitWriter(conn, clock, ids);
    this.reader = conn.reader;
    this.log = new LogReader(conn.reader);
    this.optimizer = new Optimizer(conn.kind, this.writer, clock);
  }

  static async open(loc: StoreLocation, clock: Clock, ids: IdGenerator): Promise<Store> {
    const conn = await openConnections(loc);
    let store: Store | undefined;
    try {
      await migrate(conn, migrations(conn.kind));
      store = new Store(conn, clock, ids);
      await store.optimizer.atOpen(conn.writer);
    } catch (error) {
      store?.optimizer.close();
      await conn.close();
      throw error;
    }
    return store;
  }

  /**
   * Bring a plugin's own tables up to date. Each plugin keeps its own migration history
   * (`plugin_migrations_<name>`), so enabling one late never reorders another's.
   */
  migratePlugin(name: string, steps: Record<string, Migration>): Promise<void> {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`bad plugin name ${JSON.stringify(name)}`);
    return migrate(this.conn, { getMigrations: async () => steps }, `plugin_migrations_${name}`);
  }

  /** Refresh the planner's statistics now (after a bulk load; tests and benches). */
  analyze(): Promise<void> {
    return this.optimizer.analyze();
  }

  /** Row locks exist only on PostgreSQL; SQLite serialises writers on its own. */
  get supportsRowLocks(): boolean {
    return this.kind === 'postgres';
  }

  async close(): Promise<void> {
    this.optimizer.close();
    await this.writer.close();
    await this.conn.close();
  }
}

async function migrate(conn: Connections, provider: MigrationProvider, table?: string): Promise<void> {
  // Kysely's Migrator, given no schema, takes a `kysely_migration` table in ANY schema of the
  // database as its own; with one schema per node or per test it would then skip creating
  // its tables here and fail. Pin it to the schema this connection lives in.
  const migrationTableSchema =
    conn.kind === 'postgres'
      ? ((await sql<{ schema: string | null }>`select current_schema() as schema`.execute(conn.writer))
          .rows[0]?.schema ?? undefined)
      : undefined;
  if (await upToDate(conn, provider, table ?? 'kysely_migration', migrationTableSchema)) return;
  const migrator = new Migrator({
    db: conn.writer,
    provider,
    migrationTableSchema,
    ...(table ? { migrationTableName: table, migrationLockTableName: `${table}_lock` } : {}),
  });
  let { error, results } = await migrator.migrateToLatest();
  // Kysely looks for its tables by introspecting every schema of the database; a schema (or a
  // table in one) that another node or test drops in that instant fails the look-up ("schema …
  // does not exist", "column … of relation … does not exist"), though it says nothing about
  // ours. Such a race — a failure before any migration ran — is retried; anything else is not.
  // With a pause that grows: on a loaded machine several schemas go in one burst of drops.
  for (let retry = 0; retry < 8 && error && catalogRace(error, results, migrationTableSchema); retry++) {
    await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** retry));
    ({ error, results } = await migrator.migrateToLatest());
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message ?? String(error)}`);
  }
}

/**
 * Whether every migration is recorded and nothing else is: what the Migrator would find before
 * doing nothing. It finds it by listing every table of the database with all their columns,
 * twice per migration history (the core's and each plugin's), which was most of what opening
 * a migrated store cost, so a restart asks one query per history instead. Anything else (no
 * table yet, a pending or unknown migration) goes to the Migrator, which creates, runs or
 * reports it.
 */
async function upToDate(
  conn: Connections,
  provider: MigrationProvider,
  table: string,
  schema: string | undefined,
): Promise<boolean> {
  const from = schema ? sql.table(`${schema}.${table}`) : sql.table(table);
  let recorded: string[];
  try {
    recorded = (await sql<{ name: string }>`select name from ${from}`.execute(conn.writer)).rows.map(
      (r) => r.name,
    );
  } catch {
    return false;
  }
  const wanted = Object.keys(await provider.getMigrations());
  const done = new Set(recorded);
  return done.size === wanted.length && wanted.every((name) => done.has(name));
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

/** Drop a PostgreSQL schema (tests). */
export async function dropPostgresSchema(db: Kysely<Database>, schema: string): Promise<void> {
  await sql.raw(`drop schema if exists "${schema.replaceAll('"', '')}" cascade`).execute(db);
}
