import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Store } from '../store/store.ts';

export const SECRET_FILE = 'secret';
const SETTING = 'kernel_secret';

/**
 * The key that signs session tokens. Whoever reads it can act as any session, so:
 *
 * - SQLite (one node, one data dir): it lives in `<dataDir>/secret`, mode 0600, never in the
 *   database file (a copied or world-readable database must not leak it). A secret left in
 *   `settings` by an older version moves into the file and its row is deleted.
 * - PostgreSQL (several nodes, one database): every node must verify tokens minted by the
 *   others, so the secret stays in the database, where reading it already takes the
 *   database credentials — which grant full control of warren anyway. A file per node
 *   would have to be copied by hand and could drift.
 */
export async function loadSecret(store: Store, dataDir: string | null): Promise<Uint8Array> {
  if (store.kind === 'postgres') return fromDatabase(store);
  // An in-memory database has no data dir to keep a file in: its tokens die with it anyway.
  if (dataDir === null) return randomBytes(32);
  return fromFile(store, join(dataDir, SECRET_FILE));
}

async function fromDatabase(store: Store): Promise<Uint8Array> {
  const value = await store.writer.write(async (tx) => {
    const row = await tx.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', SETTING)
      .executeTakeFirst();
    if (row) return row.value;
    const fresh = randomBytes(32).toString('base64url');
    // Two nodes starting at once: the first insert wins and both read it back.
    await tx.db
      .insertInto('settings')
      .values({ key: SETTING, value: fresh })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const won = await tx.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', SETTING)
      .executeTakeFirstOrThrow();
    return won.value;
  });
  return Buffer.from(value, 'utf8');
}

async function fromFile(store: Store, file: string): Promise<Uint8Array> {
  const legacy = await store.reader
    .selectFrom('settings')
    .select('value')
    .where('key', '=', SETTING)
    .executeTakeFirst();
  if (!existsSync(file)) {
    // Keep the old secret's bytes so the move itself changes nothing for verification.
    write(file, legacy ? Buffer.from(legacy.value, 'utf8') : randomBytes(32));
  } else {
    chmodSync(file, 0o600);
  }
  if (legacy) {
    await store.writer.write(async (tx) => {
      // Overwrite the freed bytes too: a deleted row otherwise lingers in the file's free pages.
      await sql`pragma secure_delete = on`.execute(tx.db);
      await tx.db.deleteFrom('settings').where('key', '=', SETTING).execute();
      await sql`pragma secure_delete = off`.execute(tx.db);
    });
  }
  const secret = readFileSync(file);
  if (secret.length < 16) throw new Error(`${file} is too short to be a token secret (want 32 bytes)`);
  return secret;
}

function write(file: string, bytes: Uint8Array): void {
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  // `wx`: two processes starting at once must not each write their own secret.
  try {
    writeFileSync(file, bytes, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  chmodSync(file, 0o600);
}
