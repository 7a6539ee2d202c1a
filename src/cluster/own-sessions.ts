import { LOCAL_ENVIRONMENT } from '../kernel/environments.ts';
import type { Store } from '../store/store.ts';
import { NODE_LOST } from './takeover.ts';

/** Statuses that promise a process: a session in one of them must have its agent somewhere. */
const LIVE = ['pending', 'running', 'idle'] as const;

/** Sessions read a tick, of each kind. */
const PAGE = 500;

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
  /** The runners' environments connected here: their waiting sessions are this node's to take. */
  environments: readonly string[],
  /**
   * Where the last call's page of owned sessions ended ('' from the start): each tick reads the
   * next page, so a node running more than a page of sessions still has every one looked at.
   */
  after: string,
): Promise<{ ids: string[]; next: string }> {
  const owned = await store.reader
    .selectFrom('sessions')
    .select('id')
    .where('owner_node', '=', node)
    .where('status', 'in', LIVE)
    .where('id', '>', after)
    .orderBy('id')
    .limit(PAGE)
    .execute();
  const handed = await store.reader
    .selectFrom('sessions')
    .select('id')
    .where('status', '=', 'suspended')
    .where('suspend_reason', 'like', `${NODE_LOST}%`)
    .where((eb) => {
      // Local sessions handed here (or to nobody) it has the runtime of; a runner's wherever
      // that runner is connected here now, whoever it was handed to (a claim is conditional).
      const local = eb.and([
        eb('runner', '=', LOCAL_ENVIRONMENT),
        eb.or([eb('owner_node', '=', node), eb('owner_node', 'is', null)]),
        eb('runtime', 'in', runtimes.length > 0 ? [...runtimes] : ['']),
      ]);
      return environments.length > 0 ? eb.or([local, eb('runner', 'in', [...environments])]) : local;
    })
    .limit(PAGE)
    .execute();
  const next = owned.length === PAGE ? (owned[PAGE - 1]?.id ?? '') : '';
  return { ids: [...owned, ...handed].map((r) => r.id), next };
}
