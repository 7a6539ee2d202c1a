import { join } from 'node:path';
import { deriveNodeId } from '../cluster/node-id.ts';
import type { Tier } from '../contract/tiers.ts';
import type { KernelConfig } from '../kernel/config.ts';
import { syscallTable } from '../syscalls/table.ts';
import type { ServeOptions } from './options.ts';
import { type ConfigInput, type ResolvedConfig, resolveConfig, settingValue } from './resolve.ts';
import { effectiveTiers } from './tiers.ts';

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
  tiers: Record<Tier, string[]>;
  /** What `serve()` takes (without `demo`). */
  options: Omit<ServeOptions, 'demo'>;
}

export function loadConfig(input: ConfigInput): LoadedConfig {
  const resolved = resolveConfig(input);
  const v = <T>(path: string) => settingValue<T>(resolved, path);
  const configuredDb = v<string | null>('server.db');
  const db = configuredDb ?? join(resolved.dataDir, 'warren.db');
  const nodeId = v<string | null>('nodeId') ?? deriveNodeId(resolved.dataDir, configuredDb);
  const tiers = effectiveTiers(resolved, syscallTable());
  const traces = tracesUrl(v<string | null>('tracing.endpoint'), input.env);
  const kernel: Partial<KernelConfig> = {
    nodeId,
    limits: {
      maxDepth: v('limits.maxDepth'),
      maxChildren: v('limits.maxChildren'),
      maxSessionsPerZone: v('limits.maxSessionsPerZone'),
      maxSessionsPerRuntime: v('limits.maxSessionsPerRuntime'),
    },
    termGraceMs: v('termGraceMs'),
    shutdownGraceMs: v('shutdownGraceMs'),
    maxWaitMs: v('maxWaitMs'),
    reconcileIntervalMs: v('reconcileIntervalMs'),
    defaultTtlSeconds: v('defaultTtlSeconds'),
    retentionDays: v('retentionDays'),
    sessionRetentionDays: v('sessionRetentionDays'),
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
      kernel,
      cluster: {
        mode: v('cluster.mode'),
        leaseMs: v('cluster.leaseMs'),
        heartbeatMs: v('cluster.heartbeatMs'),
        pollMs: v('cluster.pollMs'),
      },
      gating: { tiers },
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
