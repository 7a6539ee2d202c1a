import { sql } from 'kysely';
import type { Kernel } from '../../kernel/kernel.ts';
import { KERNEL_ACTOR } from '../../vocab/principal.ts';
import { terminateIn } from './agents.ts';
import { cdb } from './schema.ts';

const DAY_MS = 86_400_000;
/** Rows per sweep transaction: a sweep costs a bounded write whatever the backlog. */
const SWEEP_BATCH = 200;

/**
 * TTL sweeper: agents past `spawned_at + ttl_seconds` are terminated (subtree and revoke
 * events included), and so are agents whose warren session ended some other way (killed
 * from `warren kill`, crashed): the coordinator's view follows the kernel's.
 */
export async function sweepTtl(kernel: Kernel): Promise<number> {
  const now = kernel.clock.now();
  const db = cdb(kernel.store.reader);
  const expired = await db
    .selectFrom('coord_agents')
    .select(['session_id', 'zone'])
    .where('status', '!=', 'terminated')
    .where('ttl_seconds', 'is not', null)
    .where(sql<boolean>`spawned_at + ttl_seconds * 1000 <= ${now}`)
    .limit(SWEEP_BATCH)
    .execute();
  const ended = await db
    .selectFrom('coord_agents')
    .innerJoin('sessions', 'sessions.id', 'coord_agents.session_id')
    .select(['coord_agents.session_id', 'coord_agents.zone'])
    .where('coord_agents.status', '!=', 'terminated')
    .where('sessions.status', '=', 'stopped')
    .limit(SWEEP_BATCH)
    .execute();
  let n = 0;
  for (const [rows, reason] of [
    [expired, 'ttl_expired'],
    [ended, 'session_ended'],
  ] as const) {
    if (rows.length === 0) continue;
    n += await kernel.store.writer.write(async (tx) => {
      let done = 0;
      for (const r of rows)
        done += (await terminateIn(tx, kernel, r.zone, [r.session_id], KERNEL_ACTOR, reason)).length;
      return done;
    });
  }
  return n;
}

/** Retention: delivered outbox rows older than the window go (dead ones stay for the operator). */
export async function cleanRetention(kernel: Kernel, outboxDays: number): Promise<number> {
  const cutoff = kernel.clock.now() - outboxDays * DAY_MS;
  return kernel.store.writer.write(async (tx) => {
    const r = await cdb(tx.db)
      .deleteFrom('coord_outbox')
      .where('status', '=', 'delivered')
      .where('delivered_at', '<', cutoff)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  });
}
