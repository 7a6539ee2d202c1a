import { defaultClusterConfig } from '../cluster/config.ts';
import { defaultKernelConfig } from '../kernel/config.ts';
import { HEAVY_READ_MS } from '../store/limits.ts';
import { CALL_SLICE_MS, CALLS_PER_TURN } from '../syscalls/loop-share.ts';

/**
 * MCP sessions over Streamable HTTP: the cap per credential, and how long one may sit idle
 * (no request, no open stream) before it is closed. Within a minute, because Claude Code never
 * ends its sessions (issue 24).
 */
export const MCP_SESSION_DEFAULTS = { maxSessionsPerCaller: 32, idleMs: 60_000 } as const;

/**
 * The value of every key when no file, variable or flag sets it. Kernel settings come from
 * the kernel's own defaults, so there is one place that says what they are. `null` means
 * "not set here": the db is `<data dir>/warren.db`, the node id is derived, the tiers are the
 * syscall table's, grants allow everything, and no TTL is imposed.
 */
export function configDefaults(): Record<string, unknown> {
  const k = defaultKernelConfig();
  const c = defaultClusterConfig();
  return {
    'server.host': '127.0.0.1',
    'server.port': 7700,
    'server.dataDir': '.warren',
    'server.db': null,
    'server.dbPoolMax': 8,
    'server.durability': 'process',
    nodeId: null,
    'cluster.mode': c.mode,
    'cluster.leaseMs': c.leaseMs,
    'cluster.heartbeatMs': c.heartbeatMs,
    'cluster.pollMs': c.pollMs,
    'limits.maxDepth': k.limits.maxDepth,
    'limits.maxChildren': k.limits.maxChildren,
    'limits.maxSessionsPerZone': k.limits.maxSessionsPerZone,
    'limits.maxSessionsPerRuntime': k.limits.maxSessionsPerRuntime ?? {},
    'limits.maxSearchMs': HEAVY_READ_MS,
    'limits.callsPerTurn': CALLS_PER_TURN,
    'limits.callSliceMs': CALL_SLICE_MS,
    'tiers.root': null,
    'tiers.orchestrator': null,
    'tiers.agent': null,
    'tiers.worker': null,
    'grants.allow': null,
    'grants.deny': null,
    containment: k.containment,
    containmentNetwork: k.containmentNetwork,
    'grants.env': [...(k.envAllow ?? [])],
    termGraceMs: k.termGraceMs,
    shutdownGraceMs: k.shutdownGraceMs,
    maxWaitMs: k.maxWaitMs,
    syncSpawnWaitMs: k.syncSpawnWaitMs,
    reconcileIntervalMs: k.reconcileIntervalMs,
    defaultTtlSeconds: k.defaultTtlSeconds ?? null,
    retentionDays: k.retentionDays,
    sessionRetentionDays: k.sessionRetentionDays,
    'plugins.enable': null,
    'plugins.settings': {},
    'auth.issuerUrl': null,
    'auth.scope': 'agent:lifecycle',
    'auth.zoneClaim': 'zone_id',
    'auth.jwksCacheMax': 256,
    'mcp.maxSessionsPerCaller': MCP_SESSION_DEFAULTS.maxSessionsPerCaller,
    'mcp.idleMs': MCP_SESSION_DEFAULTS.idleMs,
    'sockets.maxLineBytes': k.sockets.maxLineBytes,
    'sockets.maxConnections': k.sockets.maxConnections,
    'log.level': 'info',
    'gateway.enabled': k.gateway.enabled,
    'gateway.prices': k.gateway.prices,
    'gateway.concurrency': k.gateway.concurrency,
    'gateway.retries': k.gateway.retries,
    'gateway.maxRetryWaitMs': k.gateway.maxRetryWaitMs,
    'gateway.rpm': k.gateway.rpm,
    'gateway.tpm': k.gateway.tpm,
    'gateway.breakerFailures': k.gateway.breakerFailures,
    'gateway.breakerCoolMs': k.gateway.breakerCoolMs,
    'metrics.enabled': true,
    'metrics.public': false,
    'tracing.endpoint': null,
  };
}
