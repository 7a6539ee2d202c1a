import { hash, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/store.ts';
import type { IdGenerator } from '../util/ids.ts';
import { WarrenError } from '../vocab/errors.ts';
import { OPERATOR_KEY_FILE } from '../vocab/key-file.ts';

export { OPERATOR_KEY_FILE };

// One-shot: half the cost of a Hash object, and it runs on every operator request.
export const keyHash = (key: string) => hash('sha256', key, 'hex');

/**
 * On first start (no key in the database) create an operator key: stored hashed, written
 * once to `<dataDir>/operator.key` (0600) and returned so the caller can print it once.
 */
export async function ensureOperatorKey(
  store: Store,
  ids: IdGenerator,
  dataDir: string,
  name = 'admin',
): Promise<{ created: boolean; key?: string; file: string }> {
  const file = join(dataDir, OPERATOR_KEY_FILE);
  const key = `wk_${ids.secret(32)}`;
  const created = await store.writer.write(async (tx) => {
    const any = await tx.db
      .selectFrom('operator_keys')
      .select('id')
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (any) return false;
    await tx.db
      .insertInto('operator_keys')
      .values({ id: `key_${ids.secret(8)}`, name, hash: keyHash(key), created_at: tx.now, revoked_at: null })
      .execute();
    tx.append({ zone: 'default', type: 'operator.key_created', actor: 'kernel', payload: { name } });
    return true;
  });
  if (!created) return { created: false, file };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { created: true, key, file };
}

/** The operator name behind a key, or null. */
export async function verifyOperatorKey(store: Store, key: string): Promise<string | null> {
  if (!key.startsWith('wk_')) return null;
  return operatorOfHash(store, keyHash(key));
}

/** The operator name behind a key's hash (a live key's), or null. */
export async function operatorOfHash(store: Store, h: string): Promise<string | null> {
  const row = await store.reader
    .selectFrom('operator_keys')
    .select(['name', 'hash'])
    .where('hash', '=', h)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row || !timingSafeEqual(Buffer.from(row.hash), Buffer.from(h))) return null;
  return row.name;
}

/** True while `name` holds a live key (a revoked key ends its browser sessions too). */
export async function operatorHoldsKey(store: Store, name: string): Promise<boolean> {
  const row = await store.reader
    .selectFrom('operator_keys')
    .select('id')
    .where('name', '=', name)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** The first live key's operator: who a printed login link logs in as. */
export async function firstOperator(store: Store): Promise<string | null> {
  const row = await store.reader
    .selectFrom('operator_keys')
    .select('name')
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .executeTakeFirst();
  return row?.name ?? null;
}

/** A new operator key named `name`: the key is returned once, only its hash is kept. */
export async function createOperatorKey(store: Store, ids: IdGenerator, name: string, by: string) {
  const key = `wk_${ids.secret(32)}`;
  const id = `key_${ids.secret(8)}`;
  const createdAt = await store.writer.write(async (tx) => {
    await tx.db
      .insertInto('operator_keys')
      .values({ id, name, hash: keyHash(key), created_at: tx.now, revoked_at: null })
      .execute();
    tx.append({ zone: 'default', type: 'operator.key_created', actor: by, payload: { name, id } });
    return tx.now;
  });
  return { id, name, key, createdAt };
}

/** Every operator key (never the key itself), oldest first. */
export async function listOperatorKeys(store: Store) {
  const rows = await store.reader
    .selectFrom('operator_keys')
    .select(['id', 'name', 'created_at', 'revoked_at'])
    .orderBy('created_at')
    .orderBy('id')
    .limit(10_000)
    .execute();
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at, revokedAt: r.revoked_at }));
}

/**
 * Revoke a key by id: it stops working at once. The last live key is kept (revoking it
 * would lock every operator out); create another first.
 */
export async function revokeOperatorKey(store: Store, id: string, by: string) {
  return store.writer.write(async (tx) => {
    const row = await tx.db.selectFrom('operator_keys').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new WarrenError('not_found', `operator key ${id} does not exist`, { what: 'key', id });
    if (row.revoked_at !== null) return { id, revoked: false };
    const live = await tx.db
      .selectFrom('operator_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(live.n) <= 1) {
      throw new WarrenError(
        'conflict',
        'this is the last live operator key; create another before revoking it',
      );
    }
    await tx.db.updateTable('operator_keys').set({ revoked_at: tx.now }).where('id', '=', id).execute();
    tx.append({ zone: 'default', type: 'operator.key_revoked', actor: by, payload: { name: row.name, id } });
    return { id, revoked: true };
  });
}
