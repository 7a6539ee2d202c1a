import { type Kysely, type Migration, sql } from 'kysely';
import type { Clock } from '../util/clock.ts';
import type { IdGenerator } from '../util/ids.ts';
import { type Connections, type DialectKind, openConnections, type StoreLocation } from './dialect.ts';
import { LogReader } from './log.ts';
import { migrate } from './migrate.ts';
import { migrations } from './migrations/index.ts';
import { Optimizer } from './optimize.ts';
import type { ReachState } from './reachability.ts';
import type { Database } from './schema.ts';
import { GroupCommitWriter } from './writer.ts';

/** The store: one writer (group commit), readers, the log views, and the migrated schema. */
export class Store {
  readonly kind: DialectKind;
  readonly writer: GroupCommitWriter;
  readonly reader: Kysely<Database>;
  /** Reads that may take long, off the event loop (dialect.ts). */
  readonly heavyReader: Kysely<Database>;
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
    this.heavyReader = conn.heavyReader;
    this.log = new LogReader(conn.reader, conn.named);
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

  /** Whether the database answers now (reachability.ts); always so on SQLite. */
  get reach(): ReachState {
    return this.conn.reach?.state ?? { ok: true };
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

/** Drop a PostgreSQL schema (tests). */
export async function dropPostgresSchema(db: Kysely<Database>, schema: string): Promise<void> {
  await sql.raw(`drop schema if exists "${schema.replaceAll('"', '')}" cascade`).execute(db);
}
