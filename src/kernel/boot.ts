import type { KernelContext } from './context.ts';
import { setStatus } from './status.ts';

/** After a restart no agent is running: live sessions lost their transport. Returns their ids. */
export async function recover(k: KernelContext): Promise<string[]> {
  return k.store.writer.write(async (tx) => {
    const rows = await tx.db
      .selectFrom('sessions')
      .selectAll()
      .where('status', 'in', ['pending', 'running', 'idle'])
      .where('depth', '>', 0)
      .execute();
    for (const r of rows) await setStatus(tx, k, r, 'suspended', { reason: 'kernel restart' });
    const terms = await tx.db
      .selectFrom('sessions')
      .select(['id', 'term_deadline'])
      .where('status', '!=', 'stopped')
      .where('term_deadline', 'is not', null)
      .execute();
    for (const t of terms) tx.afterCommit(() => k.term.arm(t.id, Number(t.term_deadline)));
    return rows.map((r) => r.id);
  });
}

/** The per-database secret session tokens are derived from. */
export async function loadSecret(k: KernelContext): Promise<string> {
  return k.store.writer.write(async (tx) => {
    const row = await tx.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', 'kernel_secret')
      .executeTakeFirst();
    if (row) return row.value;
    const value = k.ids.secret(32);
    await tx.db.insertInto('settings').values({ key: 'kernel_secret', value }).execute();
    return value;
  });
}
