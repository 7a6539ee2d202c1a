import type { Kysely } from 'kysely';

/**
 * Who tells a session's parent about it (issue 24): null, the kernel's SIGCHLD; a plugin's
 * name, that plugin (orchestration reports a task's session as `[TASK]`, once per outcome).
 */
export const sessionReporter = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('reported_by', 'text').execute();
  },
};
