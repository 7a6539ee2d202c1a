import type { Kysely } from 'kysely';
import type { DialectKind } from '../dialect.ts';

/** Named secrets (sealed values, per zone) and the spawn grants each session holds. */
export function secrets(kind: DialectKind) {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('sessions').addColumn('spawn_grants', 'text').execute();
      await db.schema
        .createTable('secrets')
        .addColumn('zone', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('secrets_pk', ['zone', 'name'])
        .execute();
    },
  };
}
