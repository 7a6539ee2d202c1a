import type { Kysely } from 'kysely';
import type { DialectKind } from '../dialect.ts';

/** Which optional plugins this database runs: the one authority on enablement. */
export function plugins(kind: DialectKind) {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('plugins')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('version', 'text')
        .addColumn('updated_by', 'text', (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .execute();
    },
  };
}
