import { createHash, timingSafeEqual } from 'node:crypto';
import type { PluginTables } from '../../contract/plugin.ts';
import type { IdGenerator } from '../../util/ids.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { RunnersDb, RunnersTable } from './schema.ts';
import { RUNNER_NAME } from './wire.ts';

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/** Runner tokens: `wrt_<secret>`, stored hashed, one per runner name, shown once. */
export class RunnerTokens {
  constructor(
    private readonly tables: PluginTables<RunnersDb>,
    private readonly ids: IdGenerator,
  ) {}

  /**
   * A token for runner `name`: a new runner, or with `rotate` a new token for one that exists
   * (the old token stops working; a revoked runner comes back with its new token).
   */
  async create(name: string, actor: string, rotate: boolean): Promise<{ name: string; token: string }> {
    if (!RUNNER_NAME.test(name)) {
      throw new WarrenError(
        'invalid_input',
        `runner name ${JSON.stringify(name)}: lowercase letters, digits, '_' and '-', at most 63`,
        { field: 'name' },
      );
    }
    const token = `wrt_${this.ids.secret(32)}`;
    await this.tables.write(async (tx) => {
      const db = tx.db;
      const row = await db.selectFrom('runners').selectAll().where('name', '=', name).executeTakeFirst();
      if (row && !rotate && row.revoked_at === null) {
        throw new WarrenError('conflict', `runner ${name} already has a token; --rotate replaces it`, {
          name,
        });
      }
      if (row) {
        await db
          .updateTable('runners')
          .set({ token_hash: hash(token), revoked_at: null, created_at: tx.now, created_by: actor })
          .where('name', '=', name)
          .execute();
      } else {
        await db
          .insertInto('runners')
          .values({
            name,
            token_hash: hash(token),
            created_at: tx.now,
            created_by: actor,
            revoked_at: null,
            last_connected_at: null,
          })
          .execute();
      }
      tx.append({ zone: 'default', type: 'runner.token_created', actor, payload: { name, rotated: !!row } });
    });
    return { name, token };
  }

  /** The runner a token names, or null (unknown or revoked). */
  async verify(token: string): Promise<RunnersTable | null> {
    if (!token.startsWith('wrt_')) return null;
    const h = hash(token);
    const row = await this.tables.reader
      .selectFrom('runners')
      .selectAll()
      .where('token_hash', '=', h)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row || !timingSafeEqual(Buffer.from(row.token_hash), Buffer.from(h))) return null;
    return row;
  }

  async revoke(name: string, actor: string): Promise<RunnersTable> {
    return this.tables.write(async (tx) => {
      const db = tx.db;
      const row = await db.selectFrom('runners').selectAll().where('name', '=', name).executeTakeFirst();
      if (!row) throw new WarrenError('not_found', `runner ${JSON.stringify(name)} does not exist`, { name });
      if (row.revoked_at === null) {
        await db.updateTable('runners').set({ revoked_at: tx.now }).where('name', '=', name).execute();
        tx.append({ zone: 'default', type: 'runner.revoked', actor, payload: { name } });
      }
      return { ...row, revoked_at: row.revoked_at ?? tx.now };
    });
  }

  async connected(name: string): Promise<void> {
    await this.tables.write(async (tx) => {
      await tx.db
        .updateTable('runners')
        .set({ last_connected_at: tx.now })
        .where('name', '=', name)
        .execute();
    });
  }

  list(): Promise<RunnersTable[]> {
    return this.tables.reader.selectFrom('runners').selectAll().orderBy('name').execute();
  }

  get(name: string): Promise<RunnersTable | undefined> {
    return this.tables.reader.selectFrom('runners').selectAll().where('name', '=', name).executeTakeFirst();
  }
}
