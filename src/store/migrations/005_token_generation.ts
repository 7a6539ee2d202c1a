import type { Kysely } from 'kysely';

/**
 * A session token names the generation it was minted for; resume bumps `token_gen`, so the
 * token an orphaned old process holds is refused from then on.
 */
export const tokenGeneration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('sessions')
      .addColumn('token_gen', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
