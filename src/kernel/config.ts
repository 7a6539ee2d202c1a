import { UNIX_SOCKET_DEFAULTS, type UnixSocketLimits } from '../util/socket-limits.ts';
import type { ContainmentSetting } from './containment.ts';
import { defaultGatewayConfig, type GatewayConfig } from './gateway/config.ts';

/** Everything a kernel's behaviour depends on. Built once; two kernels never share one. */
export interface KernelLimits {
  /** Deepest allowed spawn (init is 0). */
  maxDepth: number;
  /** Live children per parent. */
  maxChildren: number;
  /** Live sessions per zone (init not counted). */
  maxSessionsPerZone: number;
  /**
   * Live sessions per zone of one runtime (seed 003's "per application": in warren the kind
   * of agent is its runtime). Runtimes not named are bounded by the zone limit alone.
   */
  maxSessionsPerRuntime?: Record<string, number>;
}

export interface KernelConfig {
  limits: KernelLimits;
  /** SIGTERM grace period before the kernel sends SIGKILL itself. */
  termGraceMs: number;
  /**
   * Shutdown: the longest a stopping server waits for in-flight work (HTTP and MCP requests,
   * live streams, a plugin's background run) before it cuts it off (seed 003's SHUTDOWN_GRACE_MS).
   */
  shutdownGraceMs: number;
  /** Longest a blocking read or wait holds before answering "nothing yet, wait again". */
  maxWaitMs: number;
  /**
   * Longest `ipc_spawn` with `pipe: 'sync'` blocks for the child's result before answering
   * "still running, wait again": below MCP clients' 60 s request timeout (docs/decisions.md).
   */
  syncSpawnWaitMs: number;
  /** Reconciliation tick. */
  reconcileIntervalMs: number;
  /** How often delivery cursors are persisted (delivery is at-least-once in between). */
  cursorFlushMs: number;
  /** TTL given to a session spawned without one (null: none). */
  defaultTtlSeconds?: number | null;
  /** Resume sessions that were live when the kernel last stopped. */
  resumeOnStart: boolean;
  /** Events older than this are deleted by the retention phase (undelivered messages are kept). */
  retentionDays: number | null;
  /** Stopped sessions and closed streams leave the tables this long after they ended (null: never). */
  sessionRetentionDays: number | null;
  /** The URL agents use to reach this kernel (set by the HTTP surface once it listens). */
  publicUrl: string | null;
  /**
   * Where warren's HTTP server serves the model gateway (set with publicUrl once it listens;
   * the same address unless a test stands another MCP endpoint in for publicUrl). Null: no
   * gateway is served, agents get their provider keys as before.
   */
  gatewayUrl: string | null;
  /** The model gateway (docs/gateway.md). */
  gateway: GatewayConfig;
  /**
   * This node: its agent processes carry it (marks, process records), so a restart ends only
   * what this node left behind. Derived from the data dir (or database) by the assembly.
   */
  nodeId: string;
  /**
   * How agent processes are confined (containment.ts, docs/security.md): `auto` uses
   * bubblewrap where it works and otherwise refuses agents that can run shell commands;
   * `bwrap` requires it; `none` runs agents unconfined.
   */
  containment: ContainmentSetting;
  /** A confined agent's network: `full`, or `none` (it reaches warren through a bound socket). */
  containmentNetwork: 'full' | 'none';
  /** Directories no confined agent sees (set by the assembly: the data dir, where the keys are). */
  privateDirs: string[];
  /**
   * Names (globs) a session may set in a child's environment beyond the built-in allowlist
   * (src/kernel/spawn-env.ts): the `grants.env` setting.
   */
  envAllow?: readonly string[];
  /**
   * What each MCP unix socket (the zones', the groups') takes from a peer: the longest line
   * and the most connections open at once (`sockets.*`). Group sockets' peers are agents.
   */
  sockets: UnixSocketLimits;
}

export const defaultKernelConfig = (): KernelConfig => ({
  limits: { maxDepth: 10, maxChildren: 10, maxSessionsPerZone: 50 },
  termGraceMs: 60_000,
  shutdownGraceMs: 15_000,
  maxWaitMs: 20_000,
  syncSpawnWaitMs: 50_000,
  reconcileIntervalMs: 10_000,
  cursorFlushMs: 50,
  resumeOnStart: true,
  retentionDays: 30,
  sessionRetentionDays: 7,
  publicUrl: null,
  gatewayUrl: null,
  gateway: defaultGatewayConfig(),
  nodeId: 'local',
  containment: 'auto',
  containmentNetwork: 'full',
  privateDirs: [],
  sockets: { ...UNIX_SOCKET_DEFAULTS },
});
