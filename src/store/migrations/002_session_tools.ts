import type { Kysely } from 'kysely';

/** Sessions remember the tools they may call (fixed at spawn) and the grants that shaped them. */
export const sessionTools = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('tools', 'text').execute();
    await db.schema.alterTable('sessions').addColumn('grants', 'text').execute();
  },
};
