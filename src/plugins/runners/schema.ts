import type { Kysely, Migration } from 'kysely';
import type { DialectKind } from '../../store/dialect.ts';

/** A runner an operator allowed: its name (the environment `runner:<name>`) and its token, hashed. */
export interface RunnersTable {
  name: string;
  token_hash: string;
  created_at: number;
  created_by: string;
  revoked_at: number | null;
  /** When a runner of this name last connected (any node). */
  last_connected_at: number | null;
}

/** The runners plugin's tables. */
export interface RunnersDb {
  runners: RunnersTable;
}

export function runnersMigrations(kind: DialectKind): Record<string, Migration> {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    '001_runners': {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('runners')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('token_hash', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('revoked_at', big)
          .addColumn('last_connected_at', big)
          .execute();
        await db.schema.createIndex('runners_token').on('runners').column('token_hash').unique().execute();
      },
    },
  };
}
