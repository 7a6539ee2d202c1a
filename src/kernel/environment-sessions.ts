import type { SessionStatus } from '../store/schema.ts';
import type { KernelContext } from './context.ts';

/**
 * The sessions of one environment (`runner:<name>`, where their agents run), as the plugin
 * that serves it asks: any zone's, by the environment alone.
 */

/** Its sessions that have not stopped, oldest first, at most `limit`. */
export function environmentSessions(
  k: KernelContext,
  environment: string,
  limit: number,
): Promise<Array<{ id: string; zone: string; status: SessionStatus }>> {
  return k.store.reader
    .selectFrom('sessions')
    .select(['id', 'zone', 'status'])
    .where('runner', '=', environment)
    .where('status', '!=', 'stopped')
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** Its suspended sessions and why each was suspended, at most `limit`. */
export async function suspendedSessions(
  k: KernelContext,
  environment: string,
  limit: number,
): Promise<Array<{ id: string; zone: string; suspendReason: string | null }>> {
  const rows = await k.store.reader
    .selectFrom('sessions')
    .select(['id', 'zone', 'suspend_reason'])
    .where('runner', '=', environment)
    .where('status', '=', 'suspended')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, zone: r.zone, suspendReason: r.suspend_reason }));
}
