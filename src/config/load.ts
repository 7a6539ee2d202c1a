import { join } from 'node:path';
import { deriveNodeId } from '../cluster/node-id.ts';
import type { Tier } from '../contract/tiers.ts';
import type { KernelConfig } from '../kernel/config.ts';
import { syscallTable } from '../syscalls/table.ts';
import type { ServeOptions } from './options.ts';
import { type ConfigInput, type ResolvedConfig, resolveConfig, settingValue } from './resolve.ts';
import { configuredGating } from './tiers.ts';

/**
 * The configuration `warren serve` runs with and `warren config show` prints: the sources
 * resolved, the tiers checked against the syscall table, the node id derived when unset.
 */
/**
 * Where traces go: the `tracing.endpoint` setting, else the standard OpenTelemetry variables
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the whole URL, OTEL_EXPORTER_OTLP_ENDPOINT a base).
 * Null: tracing is off.
 */
export function tracesUrl(
  endpoint: string | null,
  env: Readonly<Record<string, string | undefined>>,
): string | null {
  const base = (u: string) => `${u.replace(/\/+$/, '')}/v1/traces`;
  if (endpoint) return base(endpoint);
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return base(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  return null;
}

export interface LoadedConfig {
  resolved: ResolvedConfig;
  /** The database: the configured one, or `<data dir>/warren.db`. */
  db: string;
  nodeId: string;
  /** Each tier's tools where the depth-tier policy sets them (after grants); null: by job. */
  tiers: Record<Tier, string[] | null>;
  /** What `serve()` takes (without `demo`). */
  options: Omit<ServeOptions, 'demo'>;
}

export function loadConfig(input: ConfigInput): LoadedConfig {
  const resolved = resolveConfig(input);
  const v = <T>(path: string) => settingValue<T>(resolved, path);
  const configuredDb = v<string | null>('server.db');
  const db = configuredDb ?? join(resolved.dataDir, 'warren.db');
  const nodeId = v<string | null>('nodeId') ?? deriveNodeId(resolved.dataDir, configuredDb);
  const gating = configuredGating(resolved, syscallTable());
  const tiers = gating.tiers;
  const traces = tracesUrl(v<string | null>('tracing.endpoint'), input.env);
  const kernel: Partial<KernelConfig> = {
    nodeId,
    limits: {
      maxDepth: v('limits.maxDepth'),
      maxChildren: v('limits.maxChildren'),
      maxSessionsPerZone: v('limits.maxSessionsPerZone'),
      maxSessionsPerRuntime: v('limits.maxSessionsPerRuntime'),
    },
    containment: v('containment'),
    containmentNetwork: v('containmentNetwork'),
    termGraceMs: v('termGraceMs'),
    shutdownGraceMs: v('shutdownGraceMs'),
    maxWaitMs: v('maxWaitMs'),
    syncSpawnWaitMs: v('syncSpawnWaitMs'),
    reconcileIntervalMs: v('reconcileIntervalMs'),
    defaultTtlSeconds: v('defaultTtlSeconds'),
    retentionDays: v('retentionDays'),
    sessionRetentionDays: v('sessionRetentionDays'),
    envAllow: v('grants.env'),
    gateway: {
      enabled: v('gateway.enabled'),
      prices: v('gateway.prices'),
      concurrency: v('gateway.concurrency'),
      retries: v('gateway.retries'),
      maxRetryWaitMs: v('gateway.maxRetryWaitMs'),
      rpm: v('gateway.rpm'),
      tpm: v('gateway.tpm'),
      breakerFailures: v('gateway.breakerFailures'),
      breakerCoolMs: v('gateway.breakerCoolMs'),
    },
    sockets: { maxLineBytes: v('sockets.maxLineBytes'), maxConnections: v('sockets.maxConnections') },
  };
  return {
    resolved,
    db,
    nodeId,
    tiers,
    options: {
      host: v('server.host'),
      port: v('server.port'),
      dataDir: resolved.dataDir,
      ...(configuredDb ? { db: configuredDb } : {}),
      durability: v('server.durability'),
      maxSearchMs: v('limits.maxSearchMs'),
      callsPerTurn: v('limits.callsPerTurn'),
      callSliceMs: v('limits.callSliceMs'),
      dbPoolMax: v('server.dbPoolMax'),
      kernel,
      cluster: {
        mode: v('cluster.mode'),
        leaseMs: v('cluster.leaseMs'),
        heartbeatMs: v('cluster.heartbeatMs'),
        pollMs: v('cluster.pollMs'),
      },
      gating: gating.policy,
      plugins: {
        ...(v<string[] | null>('plugins.enable') ? { seed: v<string[]>('plugins.enable') } : {}),
        config: v<Record<string, unknown>>('plugins.settings'),
      },
      ...(v<string | null>('auth.issuerUrl')
        ? {
            jwt: {
              issuer: v<string>('auth.issuerUrl'),
              scope: v<string>('auth.scope'),
              zoneClaim: v<string>('auth.zoneClaim'),
              cacheMax: v<number>('auth.jwksCacheMax'),
            },
          }
        : {}),
      mcp: { maxSessionsPerCaller: v('mcp.maxSessionsPerCaller'), idleMs: v('mcp.idleMs') },
      logLevel: v('log.level'),
      metrics: { enabled: v('metrics.enabled'), public: v('metrics.public') },
      ...(traces
        ? {
            tracing: {
              url: traces,
              ...(input.env.OTEL_SERVICE_NAME ? { serviceName: input.env.OTEL_SERVICE_NAME } : {}),
            },
          }
        : {}),
    },
  };
}
