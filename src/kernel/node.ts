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
}

export function soloNode(id: string): NodeRole {
  return {
    id,
    epoch: 0,
    clustered: false,
    once: async (_name, fn) => {
      await fn();
      return true;
    },
  };
}
