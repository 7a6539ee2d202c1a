import type { Kysely } from 'kysely';
import type { DialectKind } from '../dialect.ts';

/**
 * Browser logins (the web UI's cookie sessions), in the database so they survive a restart
 * and hold on every node sharing it. Only a hash of the cookie's token is kept: a copy of
 * the table logs no one in.
 */
export function uiSessions(kind: DialectKind) {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('ui_sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('operator', 'text', (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('expires_at', big, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ui_sessions_expires').on('ui_sessions').column('expires_at').execute();
    },
  };
}
