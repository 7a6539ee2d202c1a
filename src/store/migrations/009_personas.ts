import { type Kysely, sql } from 'kysely';
import type { DialectKind } from '../dialect.ts';

/**
 * Personas (named agent configurations, per zone) and, on each session, the persona it was
 * spawned from and its model as columns, so listings show them without parsing the spec.
 */
export function personas(kind: DialectKind) {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('personas')
        .addColumn('zone', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('runtime', 'text', (c) => c.notNull())
        .addColumn('model', 'text')
        .addColumn('system_prompt', 'text')
        // The rest of the configuration (tools, grants, maxTurns, budget, env, secretEnv, cwd,
        // config) as one JSON object: read and written whole, never queried by field.
        .addColumn('settings', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('personas_pk', ['zone', 'name'])
        .execute();
      await db.schema.alterTable('sessions').addColumn('persona', 'text').execute();
      await db.schema.alterTable('sessions').addColumn('model', 'text').execute();
      // Sessions from before keep showing the model their spec named.
      const model = kind === 'postgres' ? sql`(spec::json ->> 'model')` : sql`json_extract(spec, '$.model')`;
      await sql`update sessions set model = ${model}`.execute(db);
    },
  };
}
