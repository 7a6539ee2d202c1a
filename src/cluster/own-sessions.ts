import type { Store } from '../store/store.ts';
import { NODE_LOST } from './takeover.ts';

/** Statuses that promise a process: a session in one of them must have its agent somewhere. */
const LIVE = ['pending', 'running', 'idle'] as const;

/**
 * Sessions this node must run and may not be running (docs/scaling.md, "after an outage"):
 * those it owns in a live status — under any of its epochs: a rejoin, a fence and resume, a
 * start that failed while the path to the database was healing all leave such rows — and
 * those a lost node handed to it (or to nobody) that wait suspended. The caller starts the
 * ones that do not run here; a start is idempotent (claim is conditional, starts are
 * deduplicated), so asking again every reconcile tick is the backstop that leaves no session
 * `idle` or `running` without a process.
 */
export async function sessionsToRun(
  store: Store,
  node: string,
  runtimes: readonly string[],
): Promise<string[]> {
  const owned = await store.reader
    .selectFrom('sessions')
    .select('id')
    .where('owner_node', '=', node)
    .where('status', 'in', LIVE)
    .limit(500)
    .execute();
  const handed = await store.reader
    .selectFrom('sessions')
    .select('id')
    .where('status', '=', 'suspended')
    .where('suspend_reason', '=', NODE_LOST)
    .where((eb) => eb.or([eb('owner_node', '=', node), eb('owner_node', 'is', null)]))
    .where('runtime', 'in', [...runtimes])
    .limit(500)
    .execute();
  return [...owned, ...handed].map((r) => r.id);
}
