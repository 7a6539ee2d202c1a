/** How the nodes on one PostgreSQL database keep track of each other (docs/scaling.md). */
export interface ClusterConfig {
  /**
   * `auto`: join when the store is PostgreSQL (several nodes may share it); `off`: never;
   * `on`: required (on SQLite, an error: one node owns a SQLite file).
   */
  mode: 'auto' | 'on' | 'off';
  /** A node that has not renewed its lease for this long is lost: others take its sessions. */
  leaseMs: number;
  /** How often a node renews its lease (well under `leaseMs`). */
  heartbeatMs: number;
  /**
   * The bound on a lost notification: the log is read from this node's cursor at least this
   * often, whatever LISTEN/NOTIFY delivered.
   */
  pollMs: number;
}

export const defaultClusterConfig = (): ClusterConfig => ({
  mode: 'auto',
  leaseMs: 10_000,
  heartbeatMs: 2_000,
  pollMs: 500,
});
