import { createHash, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/store.ts';
import type { IdGenerator } from '../util/ids.ts';

export const OPERATOR_KEY_FILE = 'operator.key';

const hash = (key: string) => createHash('sha256').update(key).digest('hex');

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
      .values({ id: `key_${ids.secret(8)}`, name, hash: hash(key), created_at: tx.now, revoked_at: null })
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
  const h = hash(key);
  const row = await store.reader
    .selectFrom('operator_keys')
    .select(['name', 'hash'])
    .where('hash', '=', h)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row || !timingSafeEqual(Buffer.from(row.hash), Buffer.from(h))) return null;
  return row.name;
}
