import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import { Checkpointer } from './checkpointer.ts';
import { ensurePrivateDir, ensurePrivateFile, securePrivateDir, securePrivateFiles } from './file-modes.ts';
import { CurrentSchemaPostgresDialect } from './introspect.ts';
import { HEAVY_READ_MS } from './limits.ts';
import { NamedStatements } from './pg-named.ts';
import { Reachability } from './reachability.ts';
import type { Database } from './schema.ts';
import { WorkerReadDialect, WorkerReads } from './worker-reader.ts';

export type DialectKind = 'sqlite' | 'postgres';
export type Durability = 'process' | 'power';

export interface StoreLocation {
  /** A SQLite file path, or a postgres:// URL. */
  url: string;
  durability: Durability;
  /** PostgreSQL only: the schema to live in (tests use one each). */
  schema?: string;
  /** PostgreSQL only: reader pool size. */
  poolSize?: number;
  /**
   * PostgreSQL only: the `application_name` of every connection (default `warren`): an
   * operator finds a node's backends in `pg_stat_activity` by it (Warren.open sets
   * `warren <node id>`).
   */
  applicationName?: string;
  /**
   * SQLite only: warren's own data dir, kept 0700 (created so, tightened if looser). Without
   * it the database's directory is created 0700 if missing and otherwise left alone.
   */
  dataDir?: string;
  /**
   * SQLite only: who runs WAL checkpoints. `worker` (default): a worker thread, off the
   * event loop; `inline`: SQLite's automatic checkpoints inside commits (benches compare).
   */
  checkpoints?: 'worker' | 'inline';
  /** SQLite with the worker: WAL pages past which it is let start over (tests lower it). */
  walRestartFrames?: number;
  /** SQLite: the longest a heavy read may run in its worker before it is stopped (default 10 s). */
  heavyReadMs?: number;
}

/** The checkpoint worker as the writer sees it: when to pause so the WAL can start over. */
export interface WalPacer {
  readonly behind: boolean;
  catchUp(): Promise<void>;
}

/**
 * SQLite only: the writer's own connection, without the query builder. A statement run here
 * inside the writer's open transaction is part of it (one connection). For the few fixed
 * statements the writer runs per event, where the builder's per-query cost (an async hop
 * through its connection provider, ~3x the statement itself) is most of the price.
 */
export interface SqliteDirect {
  run(sql: string, params: readonly unknown[]): void;
  get<R>(sql: string, params: readonly unknown[]): R | undefined;
}

export interface Connections {
  kind: DialectKind;
  /** The single connection the group-commit writer owns. */
  writer: Kysely<Database>;
  /** SQLite: the same connection as `writer`, for prepared statements run directly. */
  direct?: SqliteDirect;
  /** SQLite with checkpoints in a worker: lets the WAL start over under steady writes. */
  wal?: WalPacer;
  /** PostgreSQL: statement texts that run as named prepared statements on every connection. */
  named?: NamedStatements;
  /** Readers: never block behind a write batch. */
  reader: Kysely<Database>;
  /**
   * Reads that may take long (full-text search over callers' words): off the event loop.
   * SQLite: a worker thread with its own connection, each read bounded (worker-reader.ts);
   * PostgreSQL: the reader, whose queries never held the loop.
   */
  heavyReader: Kysely<Database>;
  /** PostgreSQL: whether the server answers now (SQLite is a file: always reachable). */
  reach?: Reachability;
  close(): Promise<void>;
}

export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

/** How long a new PostgreSQL connection may take before it counts as unreachable. */
export const CONNECT_TIMEOUT_MS = 5000;

export async function openConnections(loc: StoreLocation): Promise<Connections> {
  return isPostgresUrl(loc.url) ? openPostgres(loc) : openSqlite(loc);
}

/** The WAL file is cut back to this after the log restarts, so a burst does not keep it big. */
const JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024;

function openSqlite(loc: StoreLocation): Connections {
  if (loc.dataDir !== undefined) securePrivateDir(loc.dataDir);
  ensurePrivateDir(dirname(loc.url));
  // Created 0600 before SQLite opens it: its -wal and -shm files take the database's mode.
  ensurePrivateFile(loc.url);
  const companions = [`${loc.url}-wal`, `${loc.url}-shm`];
  // Left looser by an older version: tightened before SQLite (re)uses them.
  securePrivateFiles(companions);
  const writerDb = new SqliteDatabase(loc.url);
  writerDb.pragma('journal_mode = WAL');
  // WAL + NORMAL survives a process crash; FULL also survives power loss.
  writerDb.pragma(`synchronous = ${loc.durability === 'power' ? 'FULL' : 'NORMAL'}`);
  writerDb.pragma('busy_timeout = 5000');
  writerDb.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
  // ANALYZE samples this many rows per index: `PRAGMA optimize` stays cheap at any size.
  writerDb.pragma('analysis_limit = 1000');
  // Checkpoints move to a worker thread; the writer never runs one inside a commit.
  const offLoop = loc.checkpoints !== 'inline';
  if (offLoop) writerDb.pragma('wal_autocheckpoint = 0');
  const checkpointer = offLoop
    ? new Checkpointer(
        loc.url,
        loc.walRestartFrames !== undefined ? { restartFrames: loc.walRestartFrames } : {},
      )
    : undefined;
  const readerDb = new SqliteDatabase(loc.url);
  readerDb.pragma('busy_timeout = 5000');
  // And after: SQLite has created them by now, with the database's mode; this only checks.
  securePrivateFiles(companions);
  const writerStatements = cachedStatements(writerDb);
  const writer = new Kysely<Database>({
    dialect: new WriterSqlite({ database: writerStatements }),
  });
  const reader = new Kysely<Database>({
    dialect: new SqliteDialect({ database: cachedStatements(readerDb) }),
  });
  // A database in memory is this connection's alone: no worker can open it.
  const inMemory = loc.url === ':memory:' || loc.url.startsWith('file::memory:');
  const heavyReader = inMemory
    ? reader
    : new Kysely<Database>({
        dialect: new WorkerReadDialect(new WorkerReads(loc.url, loc.heavyReadMs ?? HEAVY_READ_MS)),
      });
  return {
    kind: 'sqlite',
    writer,
    direct: {
      run: (text, params) => void writerStatements.prepare(text).run(...params),
      get: <R>(text: string, params: readonly unknown[]) =>
        writerStatements.prepare(text).get(...params) as R | undefined,
    },
    reader,
    heavyReader,
    ...(checkpointer ? { wal: checkpointer } : {}),
    async close() {
      await checkpointer?.close();
      if (heavyReader !== reader) await heavyReader.destroy();
      await reader.destroy();
      // Last one out folds the WAL into the database and empties it.
      try {
        writerDb.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // Busy (another process still has it open): its own close or checkpoints will do it.
      }
      await writer.destroy();
    },
  };
}

/**
 * Kysely prepares every query anew; better-sqlite3 statements are reusable, so keep the
 * hot ones. Bounded: a query with inlined values must not grow this without limit.
 */
function cachedStatements(db: SqliteDatabase.Database, max = 512) {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => db.close(),
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = db.prepare(sql);
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

/** `postgres://…?schema=name` selects the schema to live in; pg itself does not know that parameter. */
export function splitSchema(url: string): { url: string; schema?: string } {
  const u = new URL(url);
  const schema = u.searchParams.get('schema');
  if (!schema) return { url };
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema))
    throw new Error(`invalid schema name ${JSON.stringify(schema)}`);
  u.searchParams.delete('schema');
  return { url: u.toString(), schema };
}

async function openPostgres(given: StoreLocation): Promise<Connections> {
  const split = splitSchema(given.url);
  const loc: StoreLocation = { ...given, url: split.url, ...(split.schema ? { schema: split.schema } : {}) };
  const options = [
    loc.schema ? `-c search_path=${loc.schema}` : '',
    // `process`: a kernel crash loses nothing the server acknowledged; `power`: wait for the flush.
    `-c synchronous_commit=${loc.durability === 'power' ? 'on' : 'off'}`,
  ]
    .filter(Boolean)
    .join(' ');
  // Loaded only for a PostgreSQL store: an embedded SQLite server never pays for it.
  const { default: pg } = await import('pg');
  // int8 columns (seq, times) come back as numbers, not strings; per pool, not global.
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid === 20 ? (v: string) => Number.parseInt(v, 10) : pg.types.getTypeParser(oid, format),
  };
  const applicationName = (loc.applicationName ?? 'warren').slice(0, 63);
  const common = {
    connectionString: loc.url,
    options,
    types,
    application_name: applicationName,
    // A path that swallows packets (a partition) must fail a connect, not hang it.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  };
  const writerPool = new pg.Pool({ ...common, max: 1 });
  const readerPool = new pg.Pool({ ...common, max: loc.poolSize ?? 8 });
  const reach = new Reachability(() => readerPool.query('select 1'));
  for (const pool of [writerPool, readerPool]) {
    // An idle client that loses its server must not crash the kernel; the next query reports it.
    pool.on('error', (error) => reach.failed(error));
    // Nor one that is checked out: pg-pool listens only while a client is idle, and a client
    // in use between two statements (a transaction's, an advisory lock's) that loses its
    // server emits 'error' with nobody listening, which ends the process. Its statements
    // fail instead, and the pool drops it when it is released.
    pool.on('connect', (client) => client.on('error', (error) => reach.failed(error)));
  }
  if (loc.schema) {
    // On the writer's connection (its search_path may name a schema not there yet): the one
    // it opens anyway, not one more for this statement alone.
    try {
      await writerPool.query(`create schema if not exists "${loc.schema.replaceAll('"', '')}"`);
    } catch (error) {
      // Two opens at once (two nodes starting) can both pass `if not exists`; the second's
      // insert into the catalog then collides. The schema is there, which is all we asked.
      if (!['23505', '42P06'].includes((error as { code?: string }).code ?? '')) {
        reach.close();
        await Promise.allSettled([writerPool.end(), readerPool.end()]);
        throw error;
      }
    }
  }
  const named = new NamedStatements();
  const writer = new Kysely<Database>({
    dialect: new CurrentSchemaPostgresDialect({ pool: named.pool(writerPool, reach) }),
  });
  const reader = new Kysely<Database>({
    dialect: new CurrentSchemaPostgresDialect({ pool: named.pool(readerPool, reach) }),
  });
  return {
    kind: 'postgres',
    writer,
    reader,
    heavyReader: reader,
    named,
    reach,
    async close() {
      reach.close();
      await writer.destroy();
      await reader.destroy();
    },
  };
}

/**
 * The writer's dialect. SQLite runs DDL inside transactions, though Kysely's adapter says it
 * does not; saying so lets the migrator run each set of migrations as one transaction: a crash
 * leaves none of it half done, and a fresh database commits once per set instead of once per
 * statement. And its transactions begin IMMEDIATE (driver below).
 */
class WriterSqlite extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
  override createAdapter(): SqliteAdapter {
    return new TransactionalDdlAdapter();
  }
}

/**
 * Write transactions take SQLite's write lock when they begin. A deferred `begin` that reads
 * first and writes later cannot wait for the lock (SQLITE_BUSY at once, whatever the
 * busy_timeout: another connection — a second process on the file, the backup, an operator's
 * `sqlite3` — may have committed since its read), so the write failed; IMMEDIATE waits for the
 * lock at `begin`, under the busy_timeout, before anything was read.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class TransactionalDdlAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}
