import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

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
}

export interface Connections {
  kind: DialectKind;
  /** The single connection the group-commit writer owns. */
  writer: Kysely<Database>;
  /** Readers: never block behind a write batch. */
  reader: Kysely<Database>;
  close(): Promise<void>;
}

export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

export async function openConnections(loc: StoreLocation): Promise<Connections> {
  return isPostgresUrl(loc.url) ? openPostgres(loc) : openSqlite(loc);
}

function openSqlite(loc: StoreLocation): Connections {
  mkdirSync(dirname(loc.url), { recursive: true });
  const writerDb = new SqliteDatabase(loc.url);
  writerDb.pragma('journal_mode = WAL');
  // WAL + NORMAL survives a process crash; FULL also survives power loss.
  writerDb.pragma(`synchronous = ${loc.durability === 'power' ? 'FULL' : 'NORMAL'}`);
  writerDb.pragma('busy_timeout = 5000');
  const readerDb = new SqliteDatabase(loc.url);
  readerDb.pragma('busy_timeout = 5000');
  const writer = new Kysely<Database>({
    dialect: new SqliteDialect({ database: cachedStatements(writerDb) }),
  });
  const reader = new Kysely<Database>({
    dialect: new SqliteDialect({ database: cachedStatements(readerDb) }),
  });
  return {
    kind: 'sqlite',
    writer,
    reader,
    async close() {
      await writer.destroy();
      await reader.destroy();
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
  // int8 columns (seq, times) come back as numbers, not strings; per pool, not global.
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid === 20 ? (v: string) => Number.parseInt(v, 10) : pg.types.getTypeParser(oid, format),
  };
  if (loc.schema) {
    const admin = new pg.Client({ connectionString: loc.url });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists "${loc.schema.replaceAll('"', '')}"`);
    } finally {
      await admin.end();
    }
  }
  const writerPool = new pg.Pool({ connectionString: loc.url, max: 1, options, types });
  const readerPool = new pg.Pool({ connectionString: loc.url, max: loc.poolSize ?? 8, options, types });
  // An idle client that loses its server must not crash the kernel; the next query reports it.
  writerPool.on('error', () => {});
  readerPool.on('error', () => {});
  const writer = new Kysely<Database>({ dialect: new PostgresDialect({ pool: writerPool }) });
  const reader = new Kysely<Database>({ dialect: new PostgresDialect({ pool: readerPool }) });
  return {
    kind: 'postgres',
    writer,
    reader,
    async close() {
      await writer.destroy();
      await reader.destroy();
    },
  };
}
