import { LifelineDeadline } from '../runtimes/process.ts';
import { type Clock, systemClock } from '../util/clock.ts';

/**
 * Who this kernel is among the nodes that share its database (docs/scaling.md). Alone (SQLite,
 * or PostgreSQL before the cluster joined) it owns every session and runs every phase; in a
 * cluster the assembly (src/cluster/) sets the epoch of its lease and the cluster-wide lock.
 */
export interface NodeRole {
  readonly id: string;
  /** The fencing token of this node's current lease; 0 for a node alone on its database. */
  epoch: number;
  /** Other nodes may share the database: sessions are owned, `cluster` phases take a lock. */
  clustered: boolean;
  /**
   * Run `fn` unless another node holds the cluster-wide try-lock `name` right now (then false:
   * that node is doing it). Alone, always runs.
   */
  once(name: string, fn: () => Promise<void>): Promise<boolean>;
  /**
   * The deadline this node's agents' lifeline watchers hold: in a cluster the node moves it at
   * each lease renewal, and a watcher that got no beat by then ends its agent even while this
   * node is paused or cut off (docs/scaling.md). Alone it is never set.
   */
  readonly lifelines: LifelineDeadline;
}

export function soloNode(id: string, clock: Clock = systemClock): NodeRole {
  return {
    id,
    lifelines: new LifelineDeadline(clock),
    epoch: 0,
    clustered: false,
    once: async (_name, fn) => {
      await fn();
      return true;
    },
  };
}
