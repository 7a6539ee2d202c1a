import type { Level } from 'pino';
import type { JwtOptions } from '../auth/jwt.ts';
import type { ClusterConfig } from '../cluster/config.ts';
import type { KernelConfig } from '../kernel/config.ts';
import type { TracingOptions } from '../observability/tracing.ts';
import type { Durability } from '../store/dialect.ts';
import type { GatingPolicy } from '../syscalls/gate.ts';
import type { PluginSelection } from '../syscalls/host.ts';

/** What `serve()` starts (src/app/server.ts): the config file, `WARREN_*` variables and flags resolve to it. */
export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  db?: string;
  durability: Durability;
  /** SQLite: the longest a full-text search runs (off the event loop) before it is stopped. */
  maxSearchMs?: number;
  /** The most calls that start in one turn of the event loop (src/syscalls/loop-share.ts). */
  callsPerTurn?: number;
  /** After a turn's first call, more start only while the turn has spent less than this (ms). */
  callSliceMs?: number;
  /** PostgreSQL: the reader pool's size (the writer has its own connection). */
  dbPoolMax?: number;
  demo: boolean;
  /** Kernel settings (limits, timers, retention); `nodeId` is derived from the data dir and db when unset. */
  kernel?: Partial<KernelConfig>;
  /** Several nodes on one PostgreSQL (docs/scaling.md). */
  cluster?: Partial<ClusterConfig>;
  /** Tool policy: the depth tiers where set, the default grants (docs/mcp.md). */
  gating?: GatingPolicy;
  /** Which plugins a fresh database enables, and each plugin's settings. */
  plugins?: Partial<PluginSelection>;
  /** MCP sessions over Streamable HTTP: the cap per credential and the idle expiry. */
  mcp?: { maxSessionsPerCaller?: number; idleMs?: number };
  /** JSON log lines on stderr at this level and above; default `info`. */
  logLevel?: Level | 'silent';
  /** `GET /metrics`: on by default; `public` drops its credential check on a loopback address only. */
  metrics?: { enabled?: boolean; public?: boolean };
  /** OpenTelemetry traces (OTLP/HTTP); off unless given. */
  tracing?: TracingOptions;
  /** Bearer JWTs of an external issuer (the coordinator's callers); off unless given. */
  jwt?: JwtOptions;
}
