import { sql } from 'kysely';
import type { Kernel } from '../../kernel/kernel.ts';
import { KERNEL_ACTOR } from '../../vocab/principal.ts';
import { terminateIn } from './agents.ts';
import type { CoordinatorTables } from './schema.ts';

const DAY_MS = 86_400_000;
/** Rows per sweep transaction: a sweep costs a bounded write whatever the backlog. */
const SWEEP_BATCH = 200;
/** Live agents whose sessions are asked after at once. */
const LIVE_PAGE = 500;

interface AgentRef {
  session_id: string;
  zone: string;
}

/**
 * TTL sweeper: agents past `spawned_at + ttl_seconds` are terminated (subtree and revoke
 * events included), and so are agents whose warren session ended some other way (killed
 * from `warren kill`, crashed): the coordinator's view follows the kernel's.
 */
export async function sweepTtl(kernel: Kernel, tables: CoordinatorTables): Promise<number> {
  const now = kernel.clock.now();
  const expired = await tables.reader
    .selectFrom('coordinator_agents')
    .select(['session_id', 'zone'])
    .where('status', '!=', 'terminated')
    .where('ttl_seconds', 'is not', null)
    .where(sql<boolean>`spawned_at + ttl_seconds * 1000 <= ${now}`)
    .limit(SWEEP_BATCH)
    .execute();
  const ended = await endedSessions(kernel, tables);
  let n = 0;
  for (const [rows, reason] of [
    [expired, 'ttl_expired'],
    [ended, 'session_ended'],
  ] as const) {
    if (rows.length === 0) continue;
    n += await tables.write(async (tx) => {
      let done = 0;
      for (const r of rows)
        done += (await terminateIn(tx, kernel, r.zone, [r.session_id], KERNEL_ACTOR, reason)).length;
      return done;
    });
  }
  return n;
}

/**
 * Live agents whose warren session has stopped, at most a sweep's batch: the live agents a
 * page at a time (by id), the kernel saying which of each page's sessions have stopped.
 */
async function endedSessions(kernel: Kernel, tables: CoordinatorTables): Promise<AgentRef[]> {
  const ended: AgentRef[] = [];
  let after: string | null = null;
  while (ended.length < SWEEP_BATCH) {
    let q = tables.reader
      .selectFrom('coordinator_agents')
      .select(['session_id', 'zone'])
      .where('status', '!=', 'terminated');
    if (after !== null) q = q.where('session_id', '>', after);
    const page = await q.orderBy('session_id').limit(LIVE_PAGE).execute();
    const stopped = new Set(await kernel.stoppedAmong(page.map((r) => r.session_id)));
    for (const r of page) if (stopped.has(r.session_id)) ended.push(r);
    const last = page.at(-1);
    if (page.length < LIVE_PAGE || !last) break;
    after = last.session_id;
  }
  return ended.slice(0, SWEEP_BATCH);
}

/** Retention: delivered outbox rows older than the window go (dead ones stay for the operator). */
export async function cleanRetention(
  kernel: Kernel,
  tables: CoordinatorTables,
  outboxDays: number,
): Promise<number> {
  const cutoff = kernel.clock.now() - outboxDays * DAY_MS;
  return tables.write(async (tx) => {
    const r = await tx.db
      .deleteFrom('coordinator_outbox')
      .where('status', '=', 'delivered')
      .where('delivered_at', '<', cutoff)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  });
}
