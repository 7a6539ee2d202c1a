import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/store.ts';

export const SECRETS_KEY_FILE = 'secrets.key';
const SETTING = 'secrets_key';

/**
 * The key named secrets are sealed with, kept apart from the sealed values:
 *
 * - SQLite: `<dataDir>/secrets.key`, 32 random bytes, mode 0600 (beside the token secret), so
 *   a copy of the database file alone, or of its WAL, reveals no secret.
 * - PostgreSQL: every node must open what any node sealed, so the key lives in the database
 *   (`settings`), readable only with the database credentials — which control warren
 *   anyway. Values are still never stored in clear.
 * - An in-memory database: a key that dies with it, as its secrets do.
 */
export async function loadSecretsKey(store: Store, dataDir: string | null): Promise<Uint8Array> {
  if (store.kind === 'postgres') return fromDatabase(store);
  if (dataDir === null) return randomBytes(32);
  return fromFile(join(dataDir, SECRETS_KEY_FILE));
}

function fromFile(file: string): Uint8Array {
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  try {
    // `wx`: two processes starting at once must not each write their own key.
    writeFileSync(file, randomBytes(32), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  chmodSync(file, 0o600);
  const key = readFileSync(file);
  if (key.length !== 32) throw new Error(`${file} is not a secrets key (want 32 bytes, found ${key.length})`);
  return key;
}

async function fromDatabase(store: Store): Promise<Uint8Array> {
  const value = await store.writer.write(async (tx) => {
    await tx.db
      .insertInto('settings')
      .values({ key: SETTING, value: randomBytes(32).toString('base64url') })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await tx.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', SETTING)
      .executeTakeFirstOrThrow();
    return row.value;
  });
  return Buffer.from(value, 'base64url');
}
